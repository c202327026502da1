// The engine's floors, checked from the sources (docs/ARCHITECTURE.md "Floors"):
//   core     engine/src, engine/include: formulas only (no threads, clocks, ISA switches, Emscripten, API names)
//   kernels  engine/kernels: GEMM ladder and probes, the only floor with threads, timers and platform switches
//   api      engine/api: maps arguments to core and kernel calls; no platform code of its own
// CMake already keeps each floor from seeing the headers of the floors above it; this check covers what
// include paths cannot: system headers, platform macros, and quoted includes that reach into another folder.
// Usage: node scripts/upkeep/check-floors.mjs [root]   (exit 1 and one line per violation when a rule is broken)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const PLATFORM_HEADERS =
  /^<(thread|chrono|mutex|atomic|future|condition_variable|emscripten[^>]*|immintrin\.h|x86intrin\.h|arm_neon\.h|wasm_simd128\.h)>$/;
const PLATFORM_MACROS = /\b(__EMSCRIPTEN__|EM_JS|EM_ASM\w*|__AVX\w*__|__SSE\w*__|__wasm\w*__|__ARM_NEON\w*)\b/;
const KERNEL_HEADERS = /^"tally\/(gemm|probe)\.h"$/;
const API_HEADERS = /^"(tally\/api\.h|api_args\.h)"$/;

/** The floors: which folders, and what each may not include or mention. */
export const FLOORS = [
  {
    name: 'core',
    folders: ['engine/src', 'engine/include'],
    forbid: [
      [PLATFORM_HEADERS, 'a platform header (threads, clocks, intrinsics, Emscripten): kernels only'],
      [KERNEL_HEADERS, 'a kernel header: the core may not depend on timed kernels'],
      [API_HEADERS, 'an API header: the core may not read API arguments'],
    ],
    macros: true,
  },
  {
    name: 'kernels',
    folders: ['engine/kernels'],
    forbid: [[API_HEADERS, 'an API header: kernels sit below the API']],
    macros: false,
  },
  {
    name: 'api',
    folders: ['engine/api'],
    forbid: [[PLATFORM_HEADERS, 'a platform header: the API maps arguments, platform code lives in kernels']],
    macros: true,
  },
];

function sourcesUnder(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourcesUnder(path));
    else if (/\.(cpp|h|hpp)$/.test(name)) out.push(path);
  }
  return out;
}

// Comments removed (line and block), so a comment that names a macro is not a violation.
function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}

/** Every violation under `root`, as "path:line: what" strings (empty when the floors hold). */
export function checkFloors(root) {
  const violations = [];
  for (const floor of FLOORS) {
    for (const folder of floor.folders) {
      for (const path of sourcesUnder(join(root, folder))) {
        const file = relative(root, path);
        const lines = code(readFileSync(path, 'utf8')).split('\n');
        lines.forEach((line, i) => {
          const include = /^\s*#\s*include\s+(\S+)/.exec(line);
          if (include) {
            for (const [pattern, why] of floor.forbid)
              if (pattern.test(include[1]))
                violations.push(`${file}:${i + 1}: ${floor.name} includes ${include[1]}: ${why}`);
            // A quoted include that climbs out of its folder bypasses the include paths CMake sets per floor.
            if (/^"[^"]*\.\.\//.test(include[1]))
              violations.push(
                `${file}:${i + 1}: ${floor.name} includes ${include[1]}: relative path out of its folder`,
              );
          }
          const macro = floor.macros && PLATFORM_MACROS.exec(line);
          if (macro)
            violations.push(
              `${file}:${i + 1}: ${floor.name} uses ${macro[1]}: platform switches live in engine/kernels`,
            );
        });
      }
    }
  }
  return violations;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? join(fileURLToPath(new URL('.', import.meta.url)), '../..');
  const violations = checkFloors(root);
  for (const v of violations) console.error(v);
  if (violations.length > 0) process.exit(1);
  console.log(`floors hold: ${FLOORS.map((f) => f.name).join(' < ')}`);
}
