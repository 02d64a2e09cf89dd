// Keyboard access to the Pera and Defly connect dialogs, compensated from outside the widgets. Their connect() adds a
// dialog (custom elements in open shadow roots) at the end of <body>, but leaves focus behind it on the page, does
// not close on Escape, and names its close button nowhere (an image without alt text). While the dialog is open this
// page goes inert, the dialog is named as a modal dialog, focus moves to its close button (given a name), and Escape
// presses that button, which the SDKs answer as a closed dialog (CONNECT_MODAL_CLOSED). An SDK that cannot reach its
// relay (offline) never wires that button: a dialog still there shortly after its close button was pressed (click or
// Escape) is removed here, and the connect attempt ends as closed (WCAG 2.1.2, no keyboard trap). Only ids the SDKs'
// own code looks up are relied on; when one is missing (another SDK version), the page is left as the SDK made it.

export type ConnectSdkKind = 'pera' | 'defly';

/** The dialog's wrapper, a child of <body> (the SDKs' `<kind>-wallet-connect-modal-wrapper`). */
const wrapperId = (kind: ConnectSdkKind): string => `${kind}-wallet-connect-modal-wrapper`;
/** Its close button, inside the header's shadow root (the SDKs' own lookup of it). */
const closeButtonId = (kind: ConnectSdkKind): string => `${kind}-wallet-modal-header-close-button`;

/** How long to look for the close button once the dialog is there: the SDKs render its content a moment later. */
const CLOSE_BUTTON_TRIES = 50;
const CLOSE_BUTTON_INTERVAL_MS = 100;
/** How long the SDK has to close its own dialog once its close button is pressed, before this module does. */
export const DISMISS_GRACE_MS = 1_000;

export interface WatchOptions {
  doc?: Document;
  /** Called once when this module closed a dialog the SDK left open: the connect attempt is over ("closed"). */
  onDismissed?: () => void;
}

/** An element by id in `root` or in any open shadow root below it. */
export function findInShadowRoots(root: Document | ShadowRoot | Element, id: string): HTMLElement | null {
  const direct = root.querySelector<HTMLElement>(`[id="${id}"]`);
  if (direct) return direct;
  for (const element of root.querySelectorAll('*')) {
    const found = element.shadowRoot ? findInShadowRoots(element.shadowRoot, id) : null;
    if (found) return found;
  }
  return null;
}

/**
 * Watches for the connect dialog of `kind` while a connection is being made; returns the function that stops
 * watching (and gives the page back its interactivity, whatever happened to the dialog).
 */
export function watchConnectDialog(
  kind: ConnectSdkKind,
  walletLabel: string,
  { doc = document, onDismissed }: WatchOptions = {},
): () => void {
  let wrapper: HTMLElement | null = null;
  let madeInert: HTMLElement[] = [];
  let opener: HTMLElement | null = null;
  let search: ReturnType<typeof setInterval> | undefined;
  let dismissal: ReturnType<typeof setTimeout> | undefined;

  const closeButton = (): HTMLElement | null =>
    wrapper ? findInShadowRoots(wrapper, closeButtonId(kind)) : null;

  function focusCloseButton(): boolean {
    const button = closeButton();
    if (!button) return false;
    button.setAttribute('aria-label', `Close the ${walletLabel} connection dialog`);
    button.focus();
    return true;
  }

  function opened(found: HTMLElement): void {
    wrapper = found;
    opener = doc.activeElement instanceof HTMLElement ? doc.activeElement : null;
    wrapper.setAttribute('role', 'dialog');
    wrapper.setAttribute('aria-modal', 'true');
    wrapper.setAttribute('aria-label', `${walletLabel} connection`);
    // Everything else on the page: not reachable by Tab or by a screen reader while the dialog is open.
    madeInert = [...doc.body.children].filter(
      (element): element is HTMLElement =>
        element instanceof HTMLElement && element !== found && !element.inert,
    );
    for (const element of madeInert) element.inert = true;
    let tries = 0;
    search = setInterval(() => {
      if (focusCloseButton() || ++tries >= CLOSE_BUTTON_TRIES) clearInterval(search);
    }, CLOSE_BUTTON_INTERVAL_MS);
    focusCloseButton();
  }

  function closed(): void {
    clearInterval(search);
    clearTimeout(dismissal);
    for (const element of madeInert) element.inert = false;
    madeInert = [];
    wrapper = null;
    // Focus was inside the dialog, now gone: back to the button that opened it (the page moves it on from there).
    if ((doc.activeElement === null || doc.activeElement === doc.body) && opener?.isConnected) opener.focus();
  }

  const observer = new MutationObserver(() => {
    const found = doc.getElementById(wrapperId(kind));
    if (found && found !== wrapper) opened(found);
    else if (!found && wrapper) closed();
  });
  observer.observe(doc.body, { childList: true });

  /** The close button was pressed: if the SDK has not closed its dialog shortly after, close it here. */
  function closePressed(): void {
    const pressedOn = wrapper;
    clearTimeout(dismissal);
    dismissal = setTimeout(() => {
      if (!pressedOn?.isConnected || pressedOn !== wrapper) return; // the SDK closed it itself
      pressedOn.remove(); // the observer gives the page back (closed())
      onDismissed?.();
    }, DISMISS_GRACE_MS);
  }

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !wrapper) return;
    const button = closeButton();
    if (!button) return;
    event.preventDefault();
    button.click(); // a composed click: onClick below sees it as a press of the close button
  };
  doc.addEventListener('keydown', onKeyDown, true);

  // Clicks inside the shadow roots reach the document retargeted; their composed path still names the button.
  const onClick = (event: MouseEvent) => {
    const button = wrapper ? closeButton() : null;
    if (button && event.composedPath().includes(button)) closePressed();
  };
  doc.addEventListener('click', onClick, true);

  const existing = doc.getElementById(wrapperId(kind));
  if (existing) opened(existing);

  return () => {
    observer.disconnect();
    doc.removeEventListener('keydown', onKeyDown, true);
    doc.removeEventListener('click', onClick, true);
    if (wrapper) closed();
    clearTimeout(dismissal);
  };
}
