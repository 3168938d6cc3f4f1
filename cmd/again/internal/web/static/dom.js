// Small helpers for the page's elements.

export const $ = (id) => document.getElementById(id);

export const reducedMotion = () => matchMedia('(prefers-reduced-motion: reduce)').matches;
