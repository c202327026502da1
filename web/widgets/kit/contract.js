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

/**
 * The default `method` declares for `arg` as text when it is a plain literal the engine uses as given ("2048",
 * "false", "generic"); undefined when it is required, "none", computed ("depends: ..."), or a stand-in whose doc
 * gives it a meaning ("0: the method's default from micro_batch and dp"): those the engine must be asked for.
 */
export function literalDefault(engine, method, arg) {
  const declared = declaredArgs(engine, method).get(arg);
  const text = declared?.default;
  if (!text || text === 'required' || text === 'none' || text.startsWith('depends:')) return undefined;
  if (declared.doc.includes(`${text}:`)) return undefined;
  return text;
}
