// Behaviour of every page, kept out of the HTML so that the pages work under the site's Content-Security-Policy
// (script-src 'self': no inline script, no inline event handler).

// Marks times that have passed: a static page cannot refresh itself, so it says when it is out of date.
for (const el of document.querySelectorAll('[data-due]')) {
  if (Date.now() > Date.parse(el.dataset.due)) el.classList.add('overdue');
}

// A copy button on every code block: examples are meant to be pasted into a terminal.
for (const pre of document.querySelectorAll('pre')) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy';
  button.textContent = 'Copy';
  button.setAttribute('aria-label', 'Copy this code');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(pre.innerText);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select and copy';
    }
    setTimeout(() => (button.textContent = 'Copy'), 2000);
  });
  pre.before(button);
}
