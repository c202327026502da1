// The npm package of tally's widgets: stages build/package/ (package.json, the ES module entry, the widget
// modules, the engine's tally.js + tally.wasm beside engine.js, type declarations and a Custom Elements Manifest)
// and runs `npm pack` there. usage: node scripts/build/pack-widgets.mjs [--site build/site] [--out build/package]
// (npm run pack:widgets). Needs a built site (scripts/build/build-site.mjs). Publishes nothing.
//
// The declarations and custom-elements.json are generated, not written by hand, so they follow the widgets:
// each element is created in headless Chromium and asked for its attributes and their defaults
// (embedAttributes(), observedAttributes), the options of the <select> that edits each one, and which public
// methods it has; the widget's source adds the attributes it reads (getAttribute('...')), the events it
// dispatches on itself and its one-line description (the file's first comment line).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';
import { failer, pathOption, root } from './options.mjs';
import { buildClassic, CLASSIC_FILE } from './build-classic.mjs';
import { ENGINE_MODULE } from './engine-module.mjs';

const siteDir = pathOption('--site', 'build/site');
const outDir = pathOption('--out', 'build/package');
const stage = path.join(outDir, 'stage');

export const PACKAGE_NAME = 'tally-widgets';
/** Public methods an element may have; the manifest lists those each element really has. */
const PUBLIC_METHODS = {
  getState: {
    signature: '(): Record<string, string>',
    description: "The widget's state: the fields its URL parameters hold.",
  },
  setState: {
    signature: '(state: Record<string, string>): void',
    description: 'Sets some or all of the state (the same fields as getState()).',
  },
  mount: {
    signature: '(): Promise<void>',
    description:
      'Starts the widget now rather than when it comes near the viewport (as the eager attribute does); returns ready.',
  },
  embedAttributes: {
    signature: '(): Record<string, string>',
    description: 'The attributes that reproduce the current state in a new element (what the embed snippets use).',
  },
};

const fail = failer('pack-widgets');
for (const file of ['tally-widgets.js', 'engine.js', 'state.js', 'tally.js', ENGINE_MODULE, 'tally.wasm', 'widgets'])
  if (!existsSync(path.join(siteDir, file)))
    fail(`${path.join(siteDir, file)} is missing: build the site first (scripts/build/build-site.mjs)`);

// ------------------------------------------------------------------------------ what each element declares
const widgetFiles = readdirSync(path.join(siteDir, 'widgets')).filter((f) => f.endsWith('.js'));
/** tag -> {file, className} from the define calls in the sources (the entry imports the same files). */
function definitions() {
  const found = [];
  for (const file of widgetFiles) {
    // The unminified source (build/site's copy is minified, scripts/build-site.mjs) holds the names read below.
    const source = readFileSync(path.join(root, 'web/widgets', file), 'utf8');
    for (const m of source.matchAll(
      /(\w+)\.define\(\s*'(tally-[a-z-]+)'\s*\)|defineWidget\(\s*'(tally-[a-z-]+)'\s*,\s*(\w+)\s*\)/g,
    ))
      found.push({ tag: m[2] ?? m[3], className: m[1] ?? m[4], file, source });
  }
  return found;
}

/** The source of `class <name>` up to the next top-level class (a file may hold two elements). */
function classSource(source, name) {
  const start = source.search(new RegExp(`^class ${name}\\b`, 'm'));
  if (start < 0) return '';
  const next = source.slice(start + 1).search(/^class \w+/m);
  return next < 0 ? source.slice(start) : source.slice(start, start + 1 + next);
}

/** Attributes a widget's source reads by literal name: getAttribute('x'), hasAttribute('x'), attr('x', 'default'). */
function sourceAttributes(body) {
  const found = {};
  for (const m of body.matchAll(
    /(?:get|has)Attribute\(\s*'([a-z][a-z0-9-]*)'\s*\)|\battr\(\s*'([a-z][a-z0-9-]*)'\s*(?:,\s*'([^']*)')?/g,
  ))
    found[m[1] ?? m[2]] ??= m[3] ?? null;
  return found;
}

async function inspectInBrowser(tags, fromSource) {
  const server = await startServer(siteDir, 0);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(new URL('embed.html', server.url).href); // tally's CSP, no widget shown
    await page.waitForFunction(() => document.querySelector('.embed-error'));
    // embed.html loads only the widget it shows: every widget comes from the entry script.
    await page.evaluate(() => import(new URL('tally-widgets.js', location.href).href));
    return await page.evaluate(
      async ({ tags, fromSource, methods }) => {
        const out = {};
        for (const tag of tags) {
          await customElements.whenDefined(tag);
          const el = document.createElement(tag);
          document.body.append(el);
          await el.ready;
          const root = el.shadowRoot;
          const embed = typeof el.embedAttributes === 'function' ? el.embedAttributes() : {};
          const control = (name) => root?.querySelector(`[name="${name}"], [name="${name.replace(/-/g, '_')}"]`);
          const describe = (name) => {
            const c = control(name);
            const label = c
              ? (
                  root.querySelector(`label[for="${c.id}"]`)?.textContent ??
                  c.closest('label')?.textContent ??
                  ''
                ).trim()
              : '';
            if (c?.tagName === 'SELECT') return { options: [...c.options].map((o) => o.value), label };
            if (c?.type === 'checkbox') return { options: ['true', 'false'], label };
            return { options: customElements.get(tag).hostAttributeOptions?.[name] ?? null, label };
          };
          const names = [
            ...new Set([
              ...Object.keys(embed),
              ...(customElements.get(tag).observedAttributes ?? []),
              ...(customElements.get(tag).hostAttributes ?? []),
              ...Object.keys(fromSource[tag]),
            ]),
          ];
          out[tag] = {
            attributes: Object.fromEntries(
              names.map((n) => [n, { default: embed[n] ?? fromSource[tag][n] ?? null, ...describe(n) }]),
            ),
            methods: Object.keys(methods).filter((m) => typeof el[m] === 'function'),
            hasReady: el.ready instanceof Promise,
          };
          el.remove();
        }
        return out;
      },
      { tags, fromSource, methods: PUBLIC_METHODS },
    );
  } finally {
    await browser.close();
    await server.close();
  }
}

const defs = definitions().map((d) => ({ ...d, body: classSource(d.source, d.className) || d.source }));
if (!defs.length) fail('no widget definitions found');
const inspected = await inspectInBrowser(
  defs.map((d) => d.tag),
  Object.fromEntries(defs.map((d) => [d.tag, sourceAttributes(d.body)])),
);

const elements = defs.map((d) => {
  const runtime = inspected[d.tag];
  const attributes = runtime.attributes;
  const events = [
    ...new Set([...d.body.matchAll(/this\.dispatchEvent\(\s*new (?:Custom)?Event\(\s*'([a-z-]+)'/g)].map((m) => m[1])),
  ];
  // The file's opening comment up to its first full stop: "<tally-x>: what it shows."
  const opening = (/^(?:\/\/ ?[^\n]*\n)+/.exec(d.source)?.[0] ?? '')
    .split('\n')
    .map((l) => l.replace(/^\/\/ ?/, ''))
    .join(' ');
  const description = (/^\s*(?:<[a-z-]+>:\s*)?(.*?[.;])(?:\s|$)/.exec(opening)?.[1] ?? opening)
    .replace(/\s+/g, ' ')
    .trim();
  return { ...d, attributes, events, methods: runtime.methods, hasReady: runtime.hasReady, description };
});

// ------------------------------------------------------------------------------ custom-elements.json (schema 1.0.0)
const typeText = (a) => (a.options ? a.options.map((o) => JSON.stringify(o)).join(' | ') : 'string');
const manifest = {
  schemaVersion: '1.0.0',
  readme: 'README.md',
  modules: [
    ...elements.map((e) => ({
      kind: 'javascript-module',
      path: `widgets/${e.file}`,
      declarations: [
        {
          kind: 'class',
          name: e.className,
          tagName: e.tag,
          customElement: true,
          description: e.description,
          superclass: e.hasReady
            ? { name: 'TallyWidget', module: 'widgets/base.js' }
            : { name: 'HTMLElement', package: 'global:' },
          attributes: Object.entries(e.attributes).map(([name, a]) => ({
            name,
            type: { text: typeText(a) },
            ...(a.default !== null ? { default: JSON.stringify(a.default) } : {}),
            ...(a.label ? { description: a.label } : {}),
          })),
          members: [
            ...(e.hasReady
              ? [
                  {
                    kind: 'field',
                    name: 'ready',
                    type: { text: 'Promise<void>' },
                    readonly: true,
                    description:
                      'Resolves once the widget has built its controls and shown its first result, or said why it could not. A widget starts when it comes near the viewport, at once with the eager attribute, or when mount() is called.',
                  },
                ]
              : []),
            ...e.methods.map((m) => ({
              kind: 'method',
              name: m,
              description: PUBLIC_METHODS[m].description,
              return: { type: { text: PUBLIC_METHODS[m].signature.split('): ')[1] } },
            })),
          ],
          events: e.events.map((name) => ({ name, type: { text: 'CustomEvent' } })),
        },
      ],
      exports: [
        {
          kind: 'custom-element-definition',
          name: e.tag,
          declaration: { name: e.className, module: `widgets/${e.file}` },
        },
      ],
    })),
    {
      kind: 'javascript-module',
      path: 'tally-widgets.js',
      declarations: [],
      exports: elements.map((e) => ({
        kind: 'js',
        name: '*',
        declaration: { name: '*', module: `widgets/${e.file}` },
      })),
    },
  ],
};

// ------------------------------------------------------------------------------ index.d.ts
const ident = (tag) => tag.replace(/(^|-)([a-z])/g, (_, __, c) => c.toUpperCase());
const dts = [
  `// Generated by scripts/build/pack-widgets.mjs from the widgets themselves: do not edit.`,
  `// Importing '${PACKAGE_NAME}' defines every element below (the module has no exports of its own).`,
  '',
  ...elements.flatMap((e) => {
    const name = ident(e.tag);
    return [
      `/** Attributes of <${e.tag}> (each sets a starting value; the page URL overrides them). */`,
      `export interface ${name}Attributes {`,
      ...Object.entries(e.attributes).map(
        ([attr, a]) =>
          `  /** ${[a.label, a.default !== null ? `default ${JSON.stringify(a.default)}` : ''].filter(Boolean).join('; ') || attr} */\n  ${JSON.stringify(attr)}?: ${typeText(a)};`,
      ),
      '}',
      '',
      `/** <${e.tag}>: ${e.description} */`,
      `export interface ${name}Element extends HTMLElement {`,
      ...(e.hasReady
        ? [
            '  /** Resolves once the widget has built its controls and shown its first result, or said why not. Starts near the viewport, with `eager`, or on mount(). */',
            '  readonly ready: Promise<void>;',
          ]
        : []),
      ...e.methods.map((m) => `  /** ${PUBLIC_METHODS[m].description} */\n  ${m}${PUBLIC_METHODS[m].signature};`),
      ...e.events.map(
        (ev) =>
          `  addEventListener(type: ${JSON.stringify(ev)}, listener: (event: CustomEvent) => void, options?: boolean | AddEventListenerOptions): void;`,
      ),
      ...(e.events.length
        ? [
            '  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;',
          ]
        : []),
      '}',
      '',
    ];
  }),
  'declare global {',
  '  interface HTMLElementTagNameMap {',
  ...elements.map((e) => `    ${JSON.stringify(e.tag)}: ${ident(e.tag)}Element;`),
  '  }',
  '}',
  '',
].join('\n');

// ------------------------------------------------------------------------------ the staging folder
rmSync(outDir, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const copy = (from, to = from) => cpSync(path.join(siteDir, from), path.join(stage, to), { recursive: true });
// The page's modules the package ships; embed.html + embed.js: the iframe snippets of the Share / embed control
// point at them.
const PAGE_FILES = ['tally-widgets.js', 'engine.js', 'state.js', 'embed.html', 'embed.js', 'embed-resizer.js'];
for (const file of [...PAGE_FILES, 'tally.js', ENGINE_MODULE, 'tally.wasm', 'widgets']) copy(file);
if (existsSync(path.join(siteDir, 'tally-relaxed.wasm'))) copy('tally-relaxed.wasm');
// The roofline looks for optional GPU measurements beside the package root; an empty report, not a 404.
writeFileSync(path.join(stage, 'gpu-report.json'), JSON.stringify({ note: 'no GPU measurements', points: [] }) + '\n');
// The classic script (scripts/build/build-classic.mjs): the engine inlined, for hosts without CORS headers or file://.
writeFileSync(path.join(stage, CLASSIC_FILE), await buildClassic(siteDir));
writeFileSync(path.join(stage, 'custom-elements.json'), JSON.stringify(manifest, null, 2) + '\n');
writeFileSync(path.join(stage, 'index.d.ts'), dts);
// The engine API's types (engine.call(method, args)), generated from the declarations by scripts/upkeep/gen-contract.mjs.
cpSync(path.join(root, 'web/tally-api.d.ts'), path.join(stage, 'tally-api.d.ts'));

const rootPackage = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const files = [
  ...PAGE_FILES,
  'widgets/',
  'tally.js',
  ENGINE_MODULE,
  'tally.wasm',
  'tally-relaxed.wasm',
  CLASSIC_FILE,
  'gpu-report.json',
  'index.d.ts',
  'tally-api.d.ts',
  'custom-elements.json',
];
const pkg = {
  name: PACKAGE_NAME,
  version: rootPackage.version,
  description:
    'Web components that count what it costs to train a language model: FLOPs, time, money and memory, computed by a C++ engine in WebAssembly.',
  // The repository has no LICENSE file: nothing grants reuse, so the package says so (docs/EMBEDDING.md).
  license: 'UNLICENSED',
  type: 'module',
  main: './tally-widgets.js',
  module: './tally-widgets.js',
  types: './index.d.ts',
  exports: {
    '.': { types: './index.d.ts', default: './tally-widgets.js' },
    './widgets/*.js': './widgets/*.js',
    './embed-resizer.js': './embed-resizer.js',
    './classic': `./${CLASSIC_FILE}`,
    [`./${CLASSIC_FILE}`]: `./${CLASSIC_FILE}`,
    './tally.wasm': './tally.wasm',
    './custom-elements.json': './custom-elements.json',
    './package.json': './package.json',
  },
  files,
  sideEffects: true,
  customElements: 'custom-elements.json',
  keywords: ['web-components', 'custom-elements', 'webassembly', 'llm', 'training', 'flops', 'education'],
};
writeFileSync(path.join(stage, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
writeFileSync(
  path.join(stage, 'README.md'),
  `# ${PACKAGE_NAME}

tally's interactive widgets as custom elements. Every number is computed by tally's C++ engine compiled to
WebAssembly (\`tally.wasm\`, loaded from beside \`engine.js\` through \`import.meta.url\`).

\`\`\`js
import '${PACKAGE_NAME}';   // defines ${elements.map((e) => `<${e.tag}>`).join(', ')}
\`\`\`

\`\`\`html
<tally-memory-budget model="llama-3-8b" gpus="8" zero="3"></tally-memory-budget>
\`\`\`

A bundler (Vite, and so VitePress and Astro; webpack 5) emits \`tally.js\` and \`tally.wasm\` with the bundle;
without one, serve the package's folder as it is. \`tally-widgets.classic.js\` is one classic script with the
engine inside, for hosts that send no CORS headers and pages opened from \`file://\`.
Attributes, methods and events: \`index.d.ts\` and \`custom-elements.json\`. More: docs/EMBEDDING.md in tally's repository.
`,
);

// ------------------------------------------------------------------------------ npm pack
const npm = (args) => execFileSync('npm', args, { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const [report] = JSON.parse(npm(['pack', '--json', '--pack-destination', outDir]));
console.log(
  `pack-widgets: ${path.relative(root, path.join(outDir, report.filename))}: ${report.entryCount} files, ` +
    `${report.size} bytes packed, ${report.unpackedSize} bytes unpacked; ${elements.length} elements: ${elements.map((e) => e.tag).join(', ')}`,
);
writeFileSync(path.join(outDir, 'pack.json'), JSON.stringify(report, null, 2) + '\n');
