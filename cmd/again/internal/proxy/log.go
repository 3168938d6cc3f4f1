package proxy

import (
	"io"
	"log"
)

// discardLog silences net/http's and httputil's logs of a client gone or
// a connection reset: the proxy breaks connections on purpose.
var discardLog = log.New(io.Discard, "", 0)
