package bench

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
)

// The migration tables of docs/migrating.md are tests: each row has a
// check, registered under its section and first cell, that runs the row's
// claim against the peer and against again. TestMigrationTables fails when
// a row has no check or a check no row, so that editing a row means
// editing its check.

// migrationRow is one row's check. Checks that wait run in a synctest
// bubble (see bubble), so that minutes of backoff take no time and every
// duration is exact.
type migrationRow struct {
	section, cell string
	check         func(t *testing.T)
}

var migrationRows []migrationRow

// row registers the check of the row whose first cell is cell, in the
// section (the "## From ..." heading) named section.
func row(section, cell string, check func(t *testing.T)) bool {
	migrationRows = append(migrationRows, migrationRow{section, cell, check})
	return true
}

// bubble runs f in a synctest bubble: time.Now, timers and sleeps are fake,
// and advance only when every goroutine of the bubble is blocked.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// synctestWait waits until every other goroutine of the bubble is blocked.
func synctestWait() { synctest.Wait() }

// docRows reads the tables of docs/migrating.md: section -> first cells.
func docRows(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("../docs/migrating.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	section, header := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section, header = strings.TrimPrefix(line, "## "), true
		case !strings.HasPrefix(line, "| "):
			header = true // the next table starts with its header
		case strings.HasPrefix(line, "| --- "):
		case header:
			header = false // the table's header row
		default:
			cell := strings.TrimSpace(strings.SplitN(line[1:], " | ", 2)[0])
			rows[section] = append(rows[section], cell)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestMigrationTables(t *testing.T) {
	doc := docRows(t)
	if len(doc) == 0 {
		t.Fatal("docs/migrating.md has no table")
	}
	checks := map[string]func(*testing.T){}
	for _, r := range migrationRows {
		key := r.section + " | " + r.cell
		if checks[key] != nil {
			t.Errorf("two checks for the row %q", key)
		}
		checks[key] = r.check
	}
	var keys []string
	for section, cells := range doc {
		for _, cell := range cells {
			key := section + " | " + cell
			keys = append(keys, key)
			if checks[key] == nil {
				t.Errorf("docs/migrating.md row %q has no check in bench/migration_*_test.go", key)
			}
		}
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	for key := range checks {
		if !seen[key] {
			t.Errorf("the check of %q has no row in docs/migrating.md (was the row edited?)", key)
		}
	}
	for _, key := range keys {
		if check := checks[key]; check != nil {
			t.Run(key, check)
		}
	}
}
