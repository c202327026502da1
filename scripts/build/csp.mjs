// The Content-Security-Policy of tally's page: the static server sends it as a header and
// scripts/build/build-site.mjs writes it into index.html as a <meta> tag, so both come from this one text.
// README.md ("Content-Security-Policy") explains each directive a host page needs.

/** Directive -> sources. */
export const PAGE_CSP_DIRECTIVES = {
  'default-src': ["'self'"],
  // 'wasm-unsafe-eval' lets the page compile tally.wasm; no 'unsafe-eval': the glue has no eval/new Function.
  'script-src': ["'self'", "'wasm-unsafe-eval'"],
  // Widgets style their shadow roots with <style> elements and KaTeX's prerendered math uses style attributes.
  'style-src': ["'self'", "'unsafe-inline'"],
  // data: for the favicon and SVG-to-PNG export, blob: for downloads of exported charts.
  'img-src': ["'self'", 'data:', 'blob:'],
  'connect-src': ["'self'"],
  'worker-src': ["'self'", 'blob:'],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
};

/** The policy as one header value. */
export const PAGE_CSP = Object.entries(PAGE_CSP_DIRECTIVES)
  .map(([name, sources]) => `${name} ${sources.join(' ')}`)
  .join('; ');
