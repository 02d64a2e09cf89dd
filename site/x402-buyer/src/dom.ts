// A tiny element builder. Text always goes in through textContent, never as HTML: report data cannot inject markup.

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) element.setAttribute(name, value);
  for (const child of children) if (child) element.append(child);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(
  tag: string,
  attributes: Record<string, string | number> = {},
  ...children: Child[]
): SVGElement {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) if (child) element.append(child);
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

/**
 * A button that copies `text` to the clipboard: a 52-character transaction id is hard to select by hand on a phone,
 * and the buyer needs it to check the payment on an explorer or to ask for help. Its label says what happened.
 */
export function copyButton(text: string, what: string): HTMLButtonElement {
  const label = `Copy ${what}`;
  const button = h('button', { type: 'button', class: 'copy', 'aria-live': 'polite' }, label);
  button.onclick = () => {
    navigator.clipboard.writeText(text).then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Could not copy: select the text instead'),
    );
    setTimeout(() => (button.textContent = label), 3000);
  };
  return button;
}
