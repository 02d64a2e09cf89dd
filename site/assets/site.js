// Behaviour of every page, kept out of the HTML so that the pages work under the site's Content-Security-Policy
// (script-src 'self': no inline script, no inline event handler).

// Marks times that have passed: a static page cannot refresh itself, so it says when it is out of date.
for (const el of document.querySelectorAll('time[data-due]')) {
  if (Date.now() > Date.parse(el.dateTime)) el.classList.add('overdue');
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

// A table wider than its column scrolls sideways inside its .table-wrap: then the box says so in a line of text
// (site.css), can be reached and scrolled with the keyboard, and is named for screen readers. Checked again when
// the window is resized or the phone turned.
const tableWraps = [...document.querySelectorAll('.table-wrap')];
function markScrollingTables() {
  for (const wrap of tableWraps) {
    const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
    wrap.classList.toggle('scrolls', scrolls);
    if (scrolls) {
      wrap.tabIndex = 0;
      wrap.setAttribute('role', 'region');
      wrap.setAttribute('aria-label', 'Table, scrolls sideways');
    } else {
      wrap.removeAttribute('tabindex');
      wrap.removeAttribute('role');
      wrap.removeAttribute('aria-label');
    }
  }
}
if (tableWraps.length) {
  markScrollingTables();
  window.addEventListener('resize', markScrollingTables);
}
