package registry

// Continue tokens, in upstream's format so that any client can page through
// a minicp LIST: base64url (no padding) of
//
//	{"v":"meta.k8s.io/v1","rv":<revision of the first page>,"start":"<next key, relative to the list prefix>"}
//
// Every later page is read at "rv", so the pages together are one consistent
// snapshot, until etcd compacts that revision (then 410 Expired).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueTokenVersion = "meta.k8s.io/v1"

// encodeContinue makes the token that resumes a list at key (an absolute
// etcd key under keyPrefix) reading at revision rev. A rev of -1 means "go on
// at the current revision", offered after the original one was compacted.
func encodeContinue(key, keyPrefix string, rev int64) (string, error) {
	next := strings.TrimPrefix(key, keyPrefix)
	if next == key {
		return "", fmt.Errorf("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(&continueToken{APIVersion: continueTokenVersion, ResourceVersion: rev, StartKey: next})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// decodeContinue returns the absolute key to resume at and the revision to
// read at. The start key is cleaned like a path so that a crafted token
// cannot escape keyPrefix.
func decodeContinue(token, keyPrefix string) (fromKey string, rev int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	switch c.APIVersion {
	case continueTokenVersion:
		if c.ResourceVersion == 0 {
			return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", errInvalidContinue, continueTokenVersion)
		}
		if len(c.StartKey) == 0 {
			return "", 0, fmt.Errorf("%w: encoded start key empty (version %s)", errInvalidContinue, continueTokenVersion)
		}
		key := c.StartKey
		if !strings.HasPrefix(key, "/") {
			key = "/" + key
		}
		if cleaned := path.Clean(key); cleaned != key {
			return "", 0, fmt.Errorf("%w: %s", errInvalidContinue, c.StartKey)
		}
		return keyPrefix + key[1:], c.ResourceVersion, nil
	default:
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %q", errInvalidContinue, c.APIVersion)
	}
}

var errInvalidContinue = fmt.Errorf("continue key is not valid")
