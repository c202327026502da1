// scripts/upkeep/check-floors.mjs: the engine's three floors (core < kernels < api) hold in the repository, and
// the check reports each kind of breach when one is planted in a scratch copy of the layout.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync, readdirSync } from 'node:fs';
import { CONCEPTS, checkFloors, includeCycles } from '../../scripts/upkeep/check-floors.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the repository keeps threads, clocks, ISA switches and API headers out of the core', () => {
  assert.deepEqual(checkFloors(root), []);
});

function scratch(files) {
  const dir = mkdtempSync(join(tmpdir(), 'tally-floors-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('each kind of breach is reported with its file, line and floor', (t) => {
  const dir = scratch({
    'engine/src/clean.cpp': '#include <cmath>\n#include "tally/model.h"\n// __EMSCRIPTEN__ in a comment is fine\n',
    'engine/src/timed.cpp': '#include <cmath>\n#include <chrono>\n',
    'engine/src/platform.cpp': 'int f() {\n#ifdef __EMSCRIPTEN__\n  return 1;\n#endif\n}\n',
    'engine/include/tally/leaky.h': '#pragma once\n#include "tally/gemm.h"\n',
    'engine/src/reads_args.cpp': '#include "tally/api.h"\n',
    'engine/src/climbs.cpp': '#include "../api/api_args.h"\n',
    'engine/kernels/gemm.cpp': '#include <thread>\n#include <immintrin.h>\n',
    'engine/kernels/probe.cpp': '#include "api_args.h"\n',
    'engine/api/api_x.cpp': '#include <thread>\n',
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const found = checkFloors(dir);
  const expect = [
    /^engine\/src\/timed\.cpp:2: core includes <chrono>/,
    /^engine\/src\/platform\.cpp:2: core uses __EMSCRIPTEN__/,
    /^engine\/include\/tally\/leaky\.h:2: core includes "tally\/gemm\.h"/,
    /^engine\/src\/reads_args\.cpp:1: core includes "tally\/api\.h"/,
    /^engine\/src\/climbs\.cpp:1: core includes "\.\.\/api\/api_args\.h": relative path/,
    /^engine\/kernels\/probe\.cpp:1: kernels includes "api_args\.h"/,
    /^engine\/api\/api_x\.cpp:1: api includes <thread>/,
  ];
  for (const pattern of expect)
    assert.ok(
      found.some((v) => pattern.test(v)),
      `${pattern} not in:\n${found.join('\n')}`,
    );
  // Kernels may use threads and intrinsics; clean.cpp's comment is not code.
  assert.ok(!found.some((v) => v.startsWith('engine/kernels/gemm.cpp')), found.join('\n'));
  assert.ok(!found.some((v) => v.startsWith('engine/src/clean.cpp')), found.join('\n'));
  assert.equal(found.length, expect.length, found.join('\n'));
});

test('a concept folder may not include a folder after it, and a flat core header is refused', (t) => {
  const dir = scratch({
    'engine/include/tally/model/model.h': '#pragma once\n#include "tally/base/error.h"\n',
    'engine/src/model/params.cpp': '#include "tally/model/model.h"\n#include "tally/step/step.h"\n',
    'engine/src/memory/memory.cpp': '#include "tally/memory.h"\n',
    'engine/src/step/step.cpp': '#include "tally/step/step_cp.h"\n',
    'engine/src/step/step_cp.cpp': '#include "tally/step/step.h"\n',
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const found = checkFloors(dir);
  assert.ok(
    found.some((v) => /^engine\/src\/model\/params\.cpp:2: .*model\/ sits below step\//.test(v)),
    found.join('\n'),
  );
  assert.ok(
    found.some((v) => /^engine\/src\/memory\/memory\.cpp:1: .*concept folder/.test(v)),
    found.join('\n'),
  );
  assert.equal(found.length, 2, found.join('\n'));
  assert.deepEqual(includeCycles(dir), ['step -> step_cp -> step']);
});

test('docs/ARCHITECTURE.md lists every concept folder and every core header in its order', () => {
  const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Concepts'), doc.indexOf('Around the floors:'));
  const rows = section.split('\n').filter((line) => /^\| [a-z_]+\/ \|/.test(line));
  assert.deepEqual(
    rows.map((row) => row.split('|')[1].trim()),
    CONCEPTS.map((c) => `${c}/`),
  );
  for (const [i, concept] of CONCEPTS.entries()) {
    const headers = readdirSync(join(root, 'engine/include/tally', concept)).filter((f) => f.endsWith('.h'));
    const listed = rows[i]
      .split('|')[3]
      .split(',')
      .map((h) => h.trim());
    assert.deepEqual(listed.sort(), headers.sort(), `${concept}/`);
  }
  assert.deepEqual(
    readdirSync(join(root, 'engine/include/tally')).filter((f) => f.endsWith('.h')),
    [],
    'every core header lives in a concept folder',
  );
});
