package ready_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/again-go/again/cmd/again/internal/ready"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	t, err := ready.Parse(srv.URL+"/healthz", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	results, err := ready.Wait(context.Background(), []ready.Checker{t}, ready.DefaultConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(results[0].Ready, results[0].Attempts)
	// Output: true 1
}

func ExampleParse() {
	t, _ := ready.Parse("postgres://app:s3cret@db:5432/app?sslmode=require", nil)
	fmt.Println(t.Scheme(), t)

	_, err := ready.Parse("postgres://app:s3cret@db:port/app", nil)
	fmt.Println(errors.Is(err, ready.ErrParse), err != nil && !strings.Contains(err.Error(), "s3cret"))
	// Output:
	// postgres postgres://app:xxxxx@db:5432/app?sslmode=require
	// true true
}
