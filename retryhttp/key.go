package retryhttp

import (
	"crypto/rand"
	"encoding/hex"
)

// NewIdempotencyKey returns a random UUID version 4 (RFC 9562) such as
// "3b241101-e2bb-4255-8caf-4136c566a962", drawn from crypto/rand so that keys
// cannot be predicted or collide across clients. It is safe for concurrent
// use. A Transport with GenerateIdempotencyKey calls it once per POST or
// PATCH request that lacks an Idempotency-Key (or X-Idempotency-Key) with
// a value that is not blank.
func NewIdempotencyKey() string {
	var u [16]byte
	// crypto/rand.Read never fails: since Go 1.24 it crashes the program
	// rather than return predictable bytes.
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
