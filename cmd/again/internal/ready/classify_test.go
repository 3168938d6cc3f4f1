package ready

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	amqp "github.com/rabbitmq/amqp091-go"
)

// redisReply is an error reply of Redis, as go-redis returns it.
type redisReply string

func (r redisReply) Error() string { return string(r) }
func (redisReply) RedisError()     {}

// TestClassify checks the rules that decide "not up yet" or permanent
// for every answer the checks know, including those that only some real
// server states give (TestRealStartingUp shows a PostgreSQL refusing with
// 57P03 and a Redis loading its dataset against real servers).
func TestClassify(t *testing.T) {
	tg, err := Parse("postgres://app:pw@127.0.0.1:1/app", nil) // refused: no lookup, no wait
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		classify  func(error) error
		err       error
		permanent bool
		cause     string
	}{
		{"pg starting up", tg.pgError, &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, false, "the database system is starting up"},
		{"pg wrong password", tg.pgError, &pgconn.PgError{Code: "28P01"}, true, "wrong credentials"},
		{"pg no such role", tg.pgError, &pgconn.PgError{Code: "28000"}, true, "wrong credentials"},
		{"pg unknown database", tg.pgError, &pgconn.PgError{Code: "3D000"}, true, "unknown database"},
		{"pg too many connections", tg.pgError, &pgconn.PgError{Code: "53300"}, false, ""},
		{"pg shutting down", tg.pgError, &pgconn.PgError{Code: "57P01"}, false, ""},
		{"mysql access denied", tg.myError, &mysql.MySQLError{Number: 1045}, true, "wrong credentials"},
		{"mysql unknown database", tg.myError, &mysql.MySQLError{Number: 1049}, true, "unknown database"},
		{"mysql too many connections", tg.myError, &mysql.MySQLError{Number: 1040}, false, ""},
		{"mysql bad packet", tg.myError, mysql.ErrMalformPkt, false, "not a MySQL server"},
		{"redis loading", tg.redisError, redisReply("LOADING Redis is loading the dataset in memory"), false, "loading its dataset"},
		{"redis wrongpass", tg.redisError, redisReply("WRONGPASS invalid username-password pair"), true, "wrong credentials"},
		{"redis noauth", tg.redisError, redisReply("NOAUTH Authentication required."), true, "wrong credentials"},
		{"redis old password error", tg.redisError, redisReply("ERR invalid password"), true, "wrong credentials"},
		{"redis busy", tg.redisError, redisReply("BUSY Redis is busy running a script"), false, ""},
		{"amqp credentials", tg.amqpError, amqp.ErrCredentials, true, "wrong credentials"},
		{"amqp vhost", tg.amqpError, amqp.ErrVhost, true, "unknown vhost"},
		{"amqp not allowed", tg.amqpError, &amqp.Error{Code: amqp.NotAllowed, Reason: "vhost x not found"}, true, "unknown vhost"},
		{"amqp frame error", tg.amqpError, &amqp.Error{Code: amqp.FrameError}, false, "not an AMQP 0-9-1 server"},
		{"refused", func(err error) error { return tg.classify(err) }, fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false, "connection refused"},
		{"permission", func(err error) error { return tg.classify(err) }, fmt.Errorf("dial: %w", syscall.EACCES), true, "permission denied"},
		{"deadline", func(err error) error { return tg.classify(err) }, context.DeadlineExceeded, false, "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.classify(tc.err)
			var e *Error
			if !errors.As(got, &e) {
				t.Fatalf("%v: %T %v, want an *Error", tc.err, got, got)
			}
			if e.Permanent != tc.permanent || !strings.Contains(e.Error(), tc.cause) {
				t.Errorf("%v: permanent %v, %q; want permanent %v, saying %q", tc.err, e.Permanent, e, tc.permanent, tc.cause)
			}
			if tc.cause != "" && strings.Count(strings.ToLower(e.Error()), tc.cause) > 1 {
				t.Errorf("%v: %q says %q more than once", tc.err, e, tc.cause)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("%v: the *Error does not unwrap to the driver's error", tc.err)
			}
		})
	}
}
