// Trusted Types (a page whose CSP says `require-trusted-types-for 'script'` refuses plain strings at HTML and script
// URL sinks): every markup write of tally's widgets goes through trustedHtml(), and every worker script URL through
// trustedScriptUrl(), both from one named policy, 'tally'. The policy passes tally's own templates through as they
// are: each value interpolated into them is escaped first (escapeHtml, kit/format.js), which is the rule the
// templates already keep; text from readers or URLs is only ever written with textContent. A page that lists its
// allowed policies (`trusted-types …`) adds `tally` to the list (docs/EMBEDDING.md); where it does not, or where
// the browser has no Trusted Types, plain strings are written as before.

let policy; // undefined: not made yet; null: none (no Trusted Types, or the page refused the name)

function tallyPolicy() {
  if (policy !== undefined) return policy;
  policy = null;
  const factory = globalThis.trustedTypes;
  if (factory && typeof factory.createPolicy === 'function')
    try {
      policy = factory.createPolicy('tally', { createHTML: (html) => html, createScriptURL: (url) => url });
    } catch (error) {
      // Another copy of tally made it first (its widgets are the ones used), or the page's `trusted-types` list
      // leaves it out: say which, once.
      console.warn(
        `tally: could not create the Trusted Types policy 'tally' (${error.message}); where the page requires Trusted Types, add 'tally' to its trusted-types directive.`,
      );
    }
  return policy;
}

/** `html` (markup built by tally's templates, every value in it escaped) as the page's HTML sinks accept it. */
export function trustedHtml(html) {
  return tallyPolicy()?.createHTML(html) ?? html;
}

/** A script URL tally made itself (its worker's, a blob: of its own) as the page's script URL sinks accept it. */
export function trustedScriptUrl(url) {
  return tallyPolicy()?.createScriptURL(String(url)) ?? url;
}
