// Small helpers for the page's elements.

export const $ = (id) => document.getElementById(id);

// setCommand shows the command line text in el so that it wraps only
// between arguments: the program and each "--flag value" go in a span of
// class arg, which does not wrap, separated by plain spaces. The element's
// text, and what a reader copies, is the command exactly.
export function setCommand(el, text) {
  const args = text ? text.split(/ (?=--)/) : [];
  el.replaceChildren(...args.flatMap((a, i) => {
    const span = document.createElement('span');
    span.className = 'arg';
    span.textContent = a;
    return i ? [' ', span] : [span];
  }));
}

export const reducedMotion = () => matchMedia('(prefers-reduced-motion: reduce)').matches;
