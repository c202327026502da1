// tally-module.js: Emscripten's glue (tally.js, a classic script that defines `createTallyModule`) as an ES module
// whose default export is that factory. web/engine.js imports it, so a bundler sees the engine as a module import
// (webpack, Rspack, Turbopack, Vite and esbuild all follow `import('./tally-module.js')`) instead of a classic script
// that sets a global name, which Docusaurus's Rspack build renamed. The glue's UMD and node names (require, module,
// exports, define, __filename, __dirname) are parameters of the wrapper, left undefined: no bundler resolves its
// node-only require("fs") or rewrites its export, and a browser or worker never takes the node branch.

/** The module's file name, beside engine.js in the site and the npm package. */
export const ENGINE_MODULE = 'tally-module.js';

/** The module's text for the glue's text. */
export function engineModuleText(glue) {
  if (!/\bvar createTallyModule\b/.test(glue)) throw new Error('tally.js does not define createTallyModule');
  return `// Emscripten's glue for tally.wasm as an ES module (scripts/build/engine-module.mjs).
const createTallyModule = ((require, module, exports, define, __filename, __dirname) => {
${glue}
return createTallyModule;
})();
export default createTallyModule;
`;
}

/**
 * An esbuild plugin for the builds that carry the glue themselves as `globalThis.createTallyModule` (the classic
 * script, the single file): engine.js takes that global first, so the module is stubbed out rather than bundled twice.
 */
export const globalEngineModule = {
  name: 'tally-global-engine',
  setup(build) {
    build.onResolve({ filter: /(^|\/)tally-module\.js$/ }, () => ({ path: ENGINE_MODULE, namespace: 'tally-engine' }));
    build.onLoad({ filter: /.*/, namespace: 'tally-engine' }, () => ({
      contents: 'export default globalThis.createTallyModule;',
      loader: 'js',
    }));
  },
};
