package ready

// docs/startup.md's Go blocks, compiled in this module by the docs test,
// use these packages, which nothing else imports: importing them here
// keeps them in go.mod and go.sum through go mod tidy.
import (
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
)
