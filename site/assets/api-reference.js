// Mounts the interactive API reference (Scalar's bundled script, loaded right after this file) on its element, with
// the document URL and options from its data attributes: no inline script, so the page works under the site's
// Content-Security-Policy.

// The bundle's zod probes for eval with `Function('')` to decide whether to compile its validators. Under
// script-src 'self' the probe fails (and is reported as a policy violation): tell zod up front to run without it.
globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };

document.addEventListener('DOMContentLoaded', () => {
  const root = document.getElementById('api-reference-root');
  if (!root || !window.Scalar) return;
  window.Scalar.createApiReference(root, {
    ...JSON.parse(root.dataset.configuration ?? '{}'),
    url: root.dataset.url,
  });
});
