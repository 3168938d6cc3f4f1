// The page's language and its strings. Every string the scripts show
// comes from text.js, generated from the Go catalogue (internal/catalog)
// that also holds the HTML's strings and the Go code's messages.
import { TEXT } from './text.js';

let current = 'en';
let chosen = false; // the user (or the URL) chose the language: the URL keeps it

// lang returns the page's language: 'en' or 'ru'.
export const lang = () => current;

// langChosen reports whether the language was chosen rather than guessed
// from the browser's.
export const langChosen = () => chosen;

// setLang sets the language; chosenByUser marks it as chosen.
export function setLang(l, chosenByUser) {
  current = l;
  if (chosenByUser) chosen = true;
}

// t returns the string for key in the page's language with each {name}
// replaced by vars[name]. A missing string shows as its key, which the
// catalogue's tests rule out.
export function t(key, vars) {
  const s = TEXT[current][key] ?? TEXT.en[key] ?? key;
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
}

// pickLanguage returns the language of the query's lang parameter, marked
// as chosen, or else the first of the browser's languages the page has.
export function pickLanguage(params) {
  const q = params.get('lang');
  if (q === 'en' || q === 'ru') {
    chosen = true;
    return q;
  }
  for (const l of navigator.languages || [navigator.language || 'en']) {
    const p = String(l).toLowerCase().slice(0, 2);
    if (p === 'ru') return 'ru';
    if (p === 'en') return 'en';
  }
  return 'en';
}
