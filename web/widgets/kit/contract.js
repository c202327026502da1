// The engine's contract as the widgets read it: `methods {detail: true}` (every method's declared arguments,
// their defaults and allowed values), asked once per engine and kept.
const declarations = new WeakMap();

/** The declared arguments of `method` by name ({type, default, values, ...}); empty when the engine refuses. */
export function declaredArgs(engine, method) {
  if (!declarations.has(engine)) {
    let methods = [];
    try {
      methods = engine.call('methods', { detail: true });
    } catch {
      // an engine without declarations: every default is asked of the engine itself
    }
    declarations.set(engine, new Map(methods.map((m) => [m.name, new Map(m.args.map((a) => [a.name, a]))])));
  }
  return declarations.get(engine).get(method) ?? new Map();
}

/** The values an enum argument of `method` takes, in declaration order ([] when it declares none). */
export function declaredValues(engine, method, arg) {
  return declaredArgs(engine, method).get(arg)?.values ?? [];
}

/** The default `method` declares for `arg` as text ("2048", "false", "0"); undefined when required, "none" or computed. */
export function declaredDefault(engine, method, arg) {
  const text = declaredArgs(engine, method).get(arg)?.default;
  if (!text || text === 'required' || text === 'none' || text.startsWith('depends:')) return undefined;
  return text;
}

/**
 * The declared default when it is a plain literal the engine uses as given ("2048", "false", "generic"); undefined
 * also for a stand-in whose doc gives it a meaning ("0: the method's default from micro_batch and dp"): those the
 * engine must be asked for.
 */
export function literalDefault(engine, method, arg) {
  const text = declaredDefault(engine, method, arg);
  return text !== undefined && declaredArgs(engine, method).get(arg).doc.includes(`${text}:`) ? undefined : text;
}

/**
 * A widget field (kit/store.js) for `method`'s argument `arg` as the contract declares it: it starts on the declared
 * default, and its tooltip is the declared doc and range. The range is checked by the engine, whose error names
 * the argument (the widget shows it beside the field), so no bound is written twice.
 */
export function declaredField(method, arg, kind, label, extra = {}) {
  const help = (w) => {
    const a = declaredArgs(w.engine, method).get(arg);
    if (!a) return '';
    const bound = (x) => Number(x).toLocaleString('en-US');
    return a.low !== undefined ? `${a.doc} (${bound(a.low)} to ${bound(a.high)})` : a.doc;
  };
  // `doc` alone (no range) is the line a folded control shows under "More settings" (kit/disclosure.js).
  const doc = (w) => declaredArgs(w.engine, method).get(arg)?.doc ?? '';
  return {
    name: arg,
    kind,
    label,
    arg,
    fallback: (w) => declaredDefault(w.engine, method, arg) ?? '',
    help,
    doc,
    ...extra,
  };
}
