// Package catalog holds every string the calculator page shows.
//
// It has one catalogue per language: en.go and ru.go. A key's prefix says
// who uses it and so how its placeholders are written:
//
//   - html.*: the page's HTML (see web's index.tmpl), as HTML;
//   - js.* and preset.*: the page's scripts (static/text.js, generated),
//     as plain text with {name} placeholders;
//   - go.*: the Go code that computes the page (package page), as fmt
//     formats; a key ending in ".plural" holds a word's forms separated by
//     "|": English one|many, Russian one|few|many (1, 2–4, 5 and more);
//   - calc.*: Russian only, internal/calc's messages about an input, whose
//     English form calc itself writes (the command line shows it), with
//     calc's {name} placeholders.
//
// Quick start:
//
//	catalog.Text("ru", "go.noRetries") // "Повторов нет: первая попытка — единственная."
//
// The catalogues are read-only: every function here is safe for
// concurrent use.
package catalog

import (
	"maps"
	"slices"
)

// Languages returns the languages of the catalogues: "en", "ru".
func Languages() []string { return []string{"en", "ru"} }

func of(lang string) map[string]string {
	if lang == "ru" {
		return russian
	}
	return english
}

// Text returns the string for key in lang ("en" or "ru"; anything else
// reads as English). A key missing in Russian falls back to English, and
// one missing in both returns the key itself, so that a slip shows on the
// page instead of an empty space (TestCatalogues fails first).
func Text(lang, key string) string {
	if s, ok := of(lang)[key]; ok {
		return s
	}
	if s, ok := english[key]; ok {
		return s
	}
	return key
}

// Lookup returns the string for key in lang's own catalogue, and whether
// it has one: unlike Text, it does not fall back to English.
func Lookup(lang, key string) (string, bool) {
	s, ok := of(lang)[key]
	return s, ok
}

// Keys returns the keys of lang's catalogue, sorted.
func Keys(lang string) []string { return slices.Sorted(maps.Keys(of(lang))) }
