// Reads JUnit XML reports (Catch2's `-r junit`, ctest's `--output-junit`, node's `--test-reporter=junit`)
// and prints "<passed> <failed> <skipped>" for all of them together, so scripts/test.sh counts suites from
// the runners' own reports. A missing, empty or unreadable report counts as one failure.
// Usage: node scripts/dev/junit-summary.mjs report.xml [more.xml ...]
import { readFileSync } from 'node:fs';

// Walks the tags of a JUnit document: each <testcase> is one test; it failed if it holds a <failure> or
// <error> element (or carries a failure attribute, as node's reporter adds), and was skipped if it holds
// <skipped>.
function countReport(xml) {
  const tag = /<(\/?)(testcase|failure|error|skipped|testsuites|testsuite)\b((?:"[^"]*"|'[^']*'|[^'">])*?)(\/?)>/g;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let current = null; // outcome of the open <testcase>, or null outside one
  let sawRoot = false;
  const close = (outcome) => {
    if (outcome === 'failed') failed += 1;
    else if (outcome === 'skipped') skipped += 1;
    else passed += 1;
  };
  for (const [, closing, name, attributes, selfClosing] of xml.matchAll(tag)) {
    if (name === 'testsuites' || name === 'testsuite') {
      sawRoot = true;
      continue;
    }
    if (name === 'testcase') {
      if (closing) {
        if (current !== null) close(current);
        current = null;
      } else {
        const outcome = /\sfailure=/.test(attributes) ? 'failed' : 'passed';
        if (selfClosing) close(outcome);
        else current = outcome;
      }
      continue;
    }
    if (current === null || closing) continue;
    if (name === 'failure' || name === 'error') current = 'failed';
    else if (name === 'skipped' && current !== 'failed') current = 'skipped';
  }
  if (!sawRoot) throw new Error('no <testsuite> or <testsuites> element');
  return { passed, failed, skipped };
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  try {
    const counts = countReport(readFileSync(file, 'utf8'));
    passed += counts.passed;
    failed += counts.failed;
    skipped += counts.skipped;
  } catch (error) {
    console.error(`junit-summary: ${file}: ${error.message}`);
    failed += 1;
  }
}
console.log(`${passed} ${failed} ${skipped}`);
