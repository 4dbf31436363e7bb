package discovery

import (
	"minicp/kinds"
)

// testResources is the table of every built-in kind.
var testResources = kinds.NewTable()
