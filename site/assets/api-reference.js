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
  // Scalar titles the document with an <h1> of its own (it has no option for its heading levels): swap it for an
  // <h2>, so that the page keeps one h1, its own title (an aria-level on an h1 is not recommended, and assistive
  // technology may ignore it). The text nodes move across, so Scalar's updates still reach them.
  new MutationObserver(() => {
    for (const h1 of root.querySelectorAll('h1')) {
      const h2 = document.createElement('h2');
      for (const { name, value } of h1.attributes) h2.setAttribute(name, value);
      h2.append(...h1.childNodes);
      h1.replaceWith(h2);
    }
  }).observe(root, { childList: true, subtree: true });
});
