// When widgets mount. A widget mounts when it comes near the viewport (within a screen and a half), so a phone's
// first load builds and computes only the figures the reader can reach, and the page stays responsive while they
// read. mountAll() starts every waiting widget at once: the page does so for a shared link whose URL carries
// widget state, and before printing.

/** How far outside the viewport a widget counts as near: a fast flick reaches a wired widget, not a blank box. */
const NEAR_VIEWPORT = '150% 0px';
const waiting = new Set();

/** Mounts every widget still waiting to come near the viewport. */
export function mountAll() {
  for (const start of [...waiting]) start();
}

// A printed page shows every figure, not its loading box.
globalThis.addEventListener?.('beforeprint', mountAll);

/** { firstScreen: Promise<boolean>, due: Promise, now(): starts it at once } for one widget (see above). */
export function mountSchedule(element) {
  if (typeof IntersectionObserver !== 'function')
    return { firstScreen: Promise.resolve(true), due: Promise.resolve(), now: () => {} };
  let placed;
  let mountNow;
  const firstScreen = new Promise((resolve) => {
    placed = resolve;
  });
  const due = new Promise((resolve) => {
    mountNow = resolve;
  });
  let decided = false;
  const start = () => {
    observer.disconnect();
    waiting.delete(start);
    if (!decided) {
      decided = true;
      placed(false);
    }
    mountNow();
  };
  const observer = new IntersectionObserver(
    (entries) => {
      const near = entries.some((entry) => entry.isIntersecting);
      if (!decided) {
        decided = true;
        placed(near);
      }
      if (near) start();
    },
    { rootMargin: NEAR_VIEWPORT },
  );
  waiting.add(start);
  observer.observe(element);
  return { firstScreen, due, now: start };
}
