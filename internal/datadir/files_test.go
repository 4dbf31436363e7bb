package datadir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEndpointsFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	main := []string{"http://127.0.0.1:2379", "http://127.0.0.1:2381"}
	if err := WriteEtcdEndpoints(dir, main); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEtcdEndpoints(dir)
	if err != nil || !slices.Equal(got, main) {
		t.Fatalf("ReadEtcdEndpoints = %v, %v; want %v", got, err, main)
	}
	if _, err := ReadEventsEtcdEndpoints(dir); err == nil {
		t.Fatal("ReadEventsEtcdEndpoints found a file nobody wrote")
	}
	if err := WriteEventsEtcdEndpoints(dir, []string{"http://127.0.0.1:2479"}); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadEventsEtcdEndpoints(dir); err != nil || len(got) != 1 {
		t.Fatalf("ReadEventsEtcdEndpoints = %v, %v", got, err)
	}
}

func TestAnEmptyEndpointsFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, EtcdEndpointsFile), []byte("\n \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if eps, err := ReadEtcdEndpoints(dir); err == nil {
		t.Fatalf("ReadEtcdEndpoints = %v, want an error", eps)
	}
}
