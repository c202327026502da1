// scripts/upkeep/check-floors.mjs: the engine's three floors (core < kernels < api) hold in the repository, and
// the check reports each kind of breach when one is planted in a scratch copy of the layout.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkFloors } from '../../scripts/upkeep/check-floors.mjs';

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
