// When widgets mount. // A widget near the viewport when the page is first laid out mounts at once; the others mount one per idle
// period, or as soon as they come near the viewport, whichever is first. So the first screen is interactive
// before off-screen widgets have built their DOM or asked the engine anything, and every widget is still
// wired soon after load without the reader scrolling to it.

/** How far outside the viewport a widget counts as near (half a screen above and below). */
const NEAR_VIEWPORT = '50% 0px';
const idleQueue = [];
let idleScheduled = false;

function runOneIdleMount() {
  idleScheduled = false;
  idleQueue.shift()?.();
  scheduleIdleMount();
}

function scheduleIdleMount() {
  if (idleScheduled || !idleQueue.length) return;
  idleScheduled = true;
  // The timeout bounds the wait on a page that is never idle; browsers without requestIdleCallback use a timer.
  if (typeof requestIdleCallback === 'function') requestIdleCallback(runOneIdleMount, { timeout: 1000 });
  else setTimeout(runOneIdleMount, 50);
}

/** { firstScreen: Promise<boolean>, due: Promise } for one widget (see above). */
export function mountSchedule(element) {
  if (typeof IntersectionObserver !== 'function') return { firstScreen: Promise.resolve(true), due: Promise.resolve() };
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
    const queued = idleQueue.indexOf(start);
    if (queued >= 0) idleQueue.splice(queued, 1);
    mountNow();
  };
  const observer = new IntersectionObserver(
    (entries) => {
      const near = entries.some((entry) => entry.isIntersecting);
      if (!decided) {
        decided = true;
        placed(near);
        if (!near) {
          idleQueue.push(start);
          scheduleIdleMount();
        }
      }
      if (near) start();
    },
    { rootMargin: NEAR_VIEWPORT },
  );
  observer.observe(element);
  return { firstScreen, due };
}
