// The buyer page: wires config, wallet, challenge check, payment and report rendering to the DOM in index.html.
import { formatUsdc } from '../../../generator/buyer/challenge.ts';
import type { PaymentRequirement } from '../../../generator/buyer/challenge.ts';
import { HUMAN_REPORT_PATH, isAlgorandMainnet } from '../../../generator/buyer/human-report-terms.ts';
import type { BuyerConfig } from './config.ts';
import { confirmPayee, loadBuyerConfig } from './config.ts';
import { describeData } from './data-mode.ts';
import { byId, copyButton, h } from './dom.ts';
import { renderProof, renderReport } from './report.ts';
import { keepReport, keptReport } from './kept-report.ts';
import type { KeptReport } from './kept-report.ts';
import type { ChallengeResult, PaidResult, PendingPayment, Problem } from './x402-flow.ts';
import {
  fetchLedgerParams,
  keptPaymentProblem,
  pendingPayments,
  requestChallenge,
  sendPayment,
  signPayment,
  preparationProblem,
} from './x402-flow.ts';
import { connectSdkWallet } from './wallets/connect-sdk.ts';
import { createDevelopmentWallet, developmentWalletAllowed } from './wallets/development.ts';
import type { BuyerWallet, WalletKind } from './wallets/types.ts';
import { WalletError } from './wallets/types.ts';

interface PageState {
  config: BuyerConfig | null;
  configProblem: string | null;
  reportUrl: string;
  wallet: BuyerWallet | null;
  challenge: Extract<ChallengeResult, { kind: 'challenge' }> | null;
  busy: boolean;
}

const state: PageState = {
  config: null,
  configProblem: null,
  reportUrl: new URL(HUMAN_REPORT_PATH, location.origin).toString(),
  wallet: null,
  challenge: null,
  busy: false,
};

const show = (id: string, visible: boolean) => {
  byId(id).hidden = !visible;
};

function setStatus(message: string): void {
  byId('status').textContent = message;
}

function networkName(network: unknown): string {
  return typeof network === 'string' && isAlgorandMainnet(network)
    ? 'Algorand mainnet'
    : `${String(network)} (not Algorand mainnet)`;
}

const requirement = (): PaymentRequirement | null =>
  state.challenge?.check.ok && state.config ? state.challenge.check.requirement : null;

function updatePayButton(): void {
  const pay = byId<HTMLButtonElement>('pay');
  const accepted = requirement();
  // A payment signed earlier for this report and kept is what Pay sends (see pay()): never a new signature.
  const kept = pendingPayments.load(state.reportUrl) !== null;
  const waiting = retryWaitSeconds() > 0;
  pay.disabled = state.busy || !state.wallet || !accepted || (kept && waiting);
  // The price on the button is the one that will be signed: the checked payment request's, not the page's text.
  if (accepted)
    pay.textContent = kept
      ? 'Send the signed payment again (no new charge)'
      : `Pay ${formatUsdc(accepted.amount)} and get the report`;
  // Clicks on these are ignored while a step runs (see whileBusy); aria-disabled rather than disabled keeps the
  // focus of a keyboard user on the button just pressed.
  byId('check-price').setAttribute('aria-disabled', String(state.busy));
  byId('retry').setAttribute('aria-disabled', String(state.busy || waiting));
  byId('pay-hint').textContent = !requirement()
    ? ''
    : kept
      ? 'A payment signed earlier on this tab is kept: this sends that same payment again, so it cannot be charged twice.'
      : state.wallet
        ? `Signing with ${state.wallet.label}.`
        : 'Connect a wallet first.';
}

const RECONNECT_LABELS: Record<WalletKind, string> = {
  pera: 'Connect Pera Wallet again',
  defly: 'Connect Defly Wallet again',
  development: 'Try the development wallet again',
};

interface ProblemOptions {
  /**
   * Move focus to the retry button: after something the person did (pay, retry, connect). Never on the page's
   * own first check: that would skip the header and, on a phone, scroll far down; the alert region announces it.
   */
  focus?: boolean;
  /** The problem came from connecting this wallet: the retry button connects it again. */
  reconnect?: WalletKind;
}

/** The last problem not from connecting a wallet: connecting (or failing to) never hides it for good. */
let standing: { problem: Problem; options: ProblemOptions } | null = null;
/** When the server's Retry-After ends (0: no wait); Retry is ignored and counts down until then. */
let retryNotBefore = 0;
let retryTimer: ReturnType<typeof setInterval> | undefined;

const retryWaitSeconds = (): number =>
  byId('retry').dataset.mode === 'reconnect'
    ? 0
    : Math.max(0, Math.ceil((retryNotBefore - Date.now()) / 1000));

function paintRetry(): void {
  const retry = byId('retry');
  const wait = retryWaitSeconds();
  retry.textContent =
    wait > 0 ? `Retry in ${wait} s (sends the same signed payment)` : (retry.dataset.label ?? '');
  if (wait > 0 && retryTimer === undefined) retryTimer = setInterval(paintRetry, 1000);
  if (wait === 0 && retryTimer !== undefined) {
    clearInterval(retryTimer);
    retryTimer = undefined;
    updatePayButton();
  }
}

/**
 * The site's own buyer page, when this page is another one (a publisher's storefront): where a report refused here
 * for good is still sold. Its address is the template's link (the site's pages are linked by absolute path alike).
 */
function siteBuyerPageElsewhere(): boolean {
  const link = byId<HTMLAnchorElement>('site-buyer-page');
  return new URL(link.href).pathname !== new URL('.', location.href).pathname;
}

function showProblem(problem: Problem | null, options: ProblemOptions = {}): void {
  // A refusal for good ends this page's sale: checking the price again could only meet it again.
  if (problem?.final) show('check-price', false);
  if (!options.reconnect) {
    standing = problem ? { problem, options } : null;
    clearInterval(retryTimer);
    retryTimer = undefined;
    retryNotBefore = problem?.retryAfterSeconds ? Date.now() + problem.retryAfterSeconds * 1000 : 0;
  }
  renderProblem(problem, options);
}

/** Puts back the standing problem (or none) in place of one from connecting a wallet. */
function restoreStandingProblem(): void {
  renderProblem(standing?.problem ?? null, { ...standing?.options, focus: false });
}

function renderProblem(problem: Problem | null, options: ProblemOptions): void {
  show('problem', problem !== null);
  if (!problem) return;
  byId('problem').dataset.kind = problem.kind;
  byId('problem-message').textContent = problem.message;
  byId('problem-tx').replaceChildren(
    ...(problem.txId
      ? [
          'Signed transaction id: ',
          h('code', { class: 'break' }, problem.txId),
          copyButton(problem.txId, 'transaction id'),
        ]
      : []),
  );
  show('problem-elsewhere', problem.final === true && siteBuyerPageElsewhere());
  const retry = byId<HTMLButtonElement>('retry');
  // Nothing to try again under a refusal for good: no button offers to.
  show('retry', !problem.final);
  const resend = problem.retrySafe && problem.txId;
  retry.dataset.label = options.reconnect
    ? RECONNECT_LABELS[options.reconnect]
    : resend
      ? 'Retry (sends the same signed payment)'
      : 'Check the price again';
  retry.dataset.mode = options.reconnect ? 'reconnect' : resend ? 'resend' : 'restart';
  retry.dataset.wallet = options.reconnect ?? '';
  paintRetry();
  updatePayButton();
  if (options.focus !== false) problemFocusTarget(problem).focus();
}

/** Where focus goes after a problem the person's action met: Retry, or under a refusal for good its way out. */
function problemFocusTarget(problem: Problem): HTMLElement {
  if (!problem.final) return byId('retry');
  if (!byId('problem-elsewhere').hidden) return byId('site-buyer-page');
  const message = byId('problem-message');
  message.tabIndex = -1; // focusable by script only: a message is not a stop of the Tab key
  return message;
}

/** What the data on sale is (live, replayed, simulated) and when it was generated, in Step 2 and beside Pay. */
function showDataMode(result: Extract<ChallengeResult, { kind: 'challenge' }>): void {
  const data = describeData(result.data, Date.now());
  for (const id of ['data-mode', 'confirm-data']) byId(id).dataset.mode = data.kind;
  byId('data-mode-label').textContent = data.label;
  byId('data-mode-detail').textContent = data.detail;
  byId('confirm-data').textContent = data.label;
  byId('offer-data').textContent = data.clause;
}

/** Shows what the server asks for (the matched offer, or the first one when refused) and the verdict. */
function showChallenge(result: Extract<ChallengeResult, { kind: 'challenge' }>): void {
  const accepts = (result.paymentRequired as { accepts?: unknown[] }).accepts;
  const offer = (
    result.check.ok ? result.check.requirement : (accepts?.[0] ?? {})
  ) as Partial<PaymentRequirement>;
  byId('offer-source').textContent =
    result.source === 'header'
      ? 'read from the PAYMENT-REQUIRED header'
      : 'read from the response body (no usable header)';
  byId('offer-amount').textContent =
    typeof offer.amount === 'string' ? `${formatUsdc(offer.amount)} (${offer.amount} units)` : '—';
  byId('offer-asset').textContent = String(offer.asset ?? '—');
  byId('offer-network').textContent = networkName(offer.network);
  byId('offer-payee').textContent = String(offer.payTo ?? '—');
  byId('offer-fee-payer').textContent = String(
    offer.extra?.feePayer ?? 'none (the buyer pays the network fee)',
  );
  showDataMode(result);
  show('challenge', true);

  const reasons = state.configProblem ? [state.configProblem] : result.check.ok ? [] : result.check.reasons;
  const list = byId('refusal-reasons');
  list.replaceChildren(...reasons.map((reason) => h('li', {}, reason)));
  show('refusal', reasons.length > 0);
  const accepted = reasons.length === 0 && result.check.ok ? result.check.requirement : null;
  show('confirm', accepted !== null);
  if (accepted) {
    const data = describeData(result.data, Date.now());
    byId('confirm-text').textContent =
      `You are about to pay exactly ${formatUsdc(accepted.amount)} (USDC, asset ${accepted.asset}) ` +
      `on ${networkName(accepted.network)} to ${accepted.payTo}, for a report built from ${data.clause}. ` +
      (accepted.extra.feePayer
        ? 'Your wallet signs only this transfer; the network fee is paid by the facilitator.'
        : 'Your wallet signs only this transfer and pays its network fee.');
  }
  updatePayButton();
}

/** config.json cannot be used (at load, or its payee's checksum later): say why, and pay nobody. */
function refuseConfig(reason: string): void {
  state.config = null;
  state.configProblem = `${reason} Without it this page cannot check who would be paid, so it will not pay.`;
  byId('config-status').textContent = state.configProblem;
  byId('config-status').classList.add('is-problem');
  if (state.challenge) showChallenge(state.challenge); // the offer on screen is now refused, and Pay goes
}

/**
 * The payee's checksum, checked with algosdk once it is wanted anyway (a wallet chosen, a payment prepared): the
 * first load only checked its form. False, with config.json refused as at load, when it fails.
 */
async function payeeConfirmed(): Promise<boolean> {
  if (!state.config) return false;
  const confirmed = await confirmPayee(state.config);
  if (confirmed.ok) return true;
  refuseConfig(confirmed.reason);
  setStatus('Payment request refused: nothing will be signed.');
  return false;
}

/** Runs one step of the flow with the pay button disabled and any earlier problem cleared. */
async function whileBusy(step: () => Promise<void>): Promise<void> {
  // One step at a time: a price check ending during a payment would re-enable Pay while the wallet still signs,
  // and a second Pay would sign a second, different payment (charged twice).
  if (state.busy) return;
  state.busy = true;
  updatePayButton();
  showProblem(null);
  try {
    await step();
  } finally {
    state.busy = false;
    updatePayButton();
  }
}

/** The offer on screen is no longer on sale: its details and its "about to pay" text go, and Pay with them. */
function withdrawOffer(): void {
  state.challenge = null;
  show('challenge', false);
  show('confirm', false);
}

/** Asks for the price; `initial` is the page's own check on load, which never moves focus. */
const checkPrice = (initial = false): Promise<void> =>
  whileBusy(async () => {
    setStatus('Asking the server for the price…');
    const result = await requestChallenge(
      state.reportUrl,
      state.config?.merchantAddress ?? '',
      state.config?.reportAmount,
    );
    if (result.kind === 'problem') {
      withdrawOffer();
      setStatus('');
      showProblem(result.problem, { focus: !initial });
      return;
    }
    state.challenge = result;
    showChallenge(result);
    setStatus(
      result.check.ok && !state.configProblem
        ? 'Payment request checked.'
        : 'Payment request refused: nothing will be signed.',
    );
  });

function showPaid(result: Extract<PaidResult, { kind: 'paid' }>): void {
  const settlement = result.settlement;
  const txId = settlement?.transaction || result.payment.txId;
  const kept: KeptReport = {
    reportUrl: state.reportUrl,
    proof: {
      txId,
      network: settlement?.network ?? result.payment.requirement.network,
      amountAtomic: result.payment.requirement.amount,
      payer: settlement?.payer ?? state.wallet?.address,
      payTo: result.payment.requirement.payTo,
      development: state.config?.facilitatorMode === 'development',
    },
    report: result.report,
    rawText: result.rawText,
  };
  keepReport(sessionStorage, kept);
  showReport(kept);
  setStatus(`Paid. Transaction ${txId}.`);
  byId('proof-title').setAttribute('tabindex', '-1');
  byId('proof-title').focus();
}

/** Shows a paid report and its proof: just after paying, or again after a reload of the same tab. */
function showReport(kept: KeptReport): void {
  byId('proof-container').replaceChildren(renderProof(kept.proof));
  byId('report-container').replaceChildren(renderReport(kept.report));
  byId('raw-json').textContent = JSON.stringify(kept.report, null, 2);
  const save = byId<HTMLButtonElement>('save');
  save.onclick = () => downloadJson(kept.rawText, `atlas-human-report-${kept.proof.txId.slice(0, 12)}.json`);
  show('result', true);
  show('confirm', false);
}

function downloadJson(text: string, fileName: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const link = h('a', { href: url, download: fileName });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function send(payment: PendingPayment): Promise<void> {
  setStatus('Sending the signed payment; the facilitator verifies and settles it…');
  const result = await sendPayment(payment);
  if (result.kind === 'paid') showPaid(result);
  else {
    // Refused before settling (stale data...): the payment was dropped, Pay must not sign a new one for this offer.
    if (result.problem.kind === 'not-for-sale') withdrawOffer();
    setStatus('');
    showProblem(result.problem);
  }
}

async function pay(): Promise<void> {
  const terms = requirement();
  const { wallet, config, challenge } = state;
  if (!terms || !wallet || !config || !challenge || state.busy) return;
  await whileBusy(async () => {
    // A payment signed earlier for this report and not yet answered is resent, never signed again.
    const kept = pendingPayments.load(state.reportUrl);
    if (kept) return send(kept);
    let payment: PendingPayment;
    try {
      if (!(await payeeConfirmed())) return; // nothing is built, let alone signed, for a payee that fails it
      setStatus('Reading the current Algorand round…');
      const params = await fetchLedgerParams(config.algodUrl);
      setStatus(`Waiting for ${wallet.label} to sign the ${formatUsdc(terms.amount)} transfer…`);
      payment = await signPayment(
        state.reportUrl,
        challenge.paymentRequired as { resource?: unknown; extensions?: Record<string, unknown> },
        terms,
        wallet,
        params,
      );
    } catch (error) {
      setStatus('');
      showProblem(preparationProblem(error));
      return;
    }
    await send(payment);
  });
}

async function retry(): Promise<void> {
  const { mode, wallet } = byId('retry').dataset;
  if (retryWaitSeconds() > 0) return; // the server asked for a wait (Retry-After): the button counts down
  const kept = pendingPayments.load(state.reportUrl);
  if (mode === 'resend' && kept) await whileBusy(() => send(kept));
  else if (mode === 'reconnect' && (wallet === 'pera' || wallet === 'defly' || wallet === 'development'))
    await connect(wallet);
  else await checkPrice();
}

async function connect(kind: WalletKind): Promise<void> {
  // Clears only a problem from connecting a wallet: why the report cannot be sold, or that a signed payment is
  // kept, stays in view.
  restoreStandingProblem();
  setStatus(
    kind === 'development'
      ? 'Creating and funding the development wallet…'
      : 'Opening the wallet connection…',
  );
  try {
    state.wallet =
      kind === 'development' && state.config?.devFundUrl
        ? await createDevelopmentWallet(state.config.devFundUrl)
        : await connectSdkWallet(kind === 'defly' ? 'defly' : 'pera');
  } catch (error) {
    setStatus('');
    // A dialog the person closed gives focus back to the button that opened it (connect-dialog.ts): left there.
    const closedByPerson = error instanceof WalletError && error.failure === 'closed';
    showProblem(preparationProblem(error), { reconnect: kind, focus: !closedByPerson });
    return;
  }
  byId('wallet-label').textContent = state.wallet.label;
  byId('wallet-address').textContent = state.wallet.address;
  byId('wallet-status').classList.toggle('is-development', state.wallet.kind === 'development');
  show('wallet-status', true);
  show('wallet-choices', false);
  show('dev-wallet', false);
  setStatus(`Connected: ${state.wallet.label}.`);
  // Told now rather than at Pay; a failure to load algosdk here is met again, and explained, at Pay.
  await payeeConfirmed().catch(() => true);
  restoreStandingProblem();
  updatePayButton();
  // The button just pressed is hidden now: focus goes on to Pay when it can be used, else to Disconnect.
  const pay = byId<HTMLButtonElement>('pay');
  (pay.disabled || byId('confirm').hidden ? byId('disconnect') : pay).focus();
}

/** The development wallet exists only for a development config on loopback (see wallets/development.ts). */
function offerDevelopmentWallet(): void {
  show('dev-wallet', state.config !== null && developmentWalletAllowed(state.config, location.href));
}

async function disconnect(): Promise<void> {
  await state.wallet?.disconnect().catch(() => undefined);
  state.wallet = null;
  show('wallet-status', false);
  show('wallet-choices', true);
  offerDevelopmentWallet();
  setStatus('Wallet disconnected.');
  updatePayButton();
  byId('connect-pera').focus(); // Disconnect is hidden now: back to the first wallet choice
}

/** The controls index.html ships disabled, so that none looks usable before this program has wired it. */
const CONTROLS_WIRED_AT_START = ['connect-pera', 'connect-defly', 'create-dev-wallet', 'check-price'];

function markReady(): void {
  for (const id of CONTROLS_WIRED_AT_START) byId<HTMLButtonElement>(id).disabled = false;
  document.body.dataset.ready = 'true';
}

async function start(): Promise<void> {
  const loaded = await loadBuyerConfig(new URL('config.json', location.href).toString(), state.reportUrl);
  if (loaded.ok) {
    state.config = loaded.config;
    state.reportUrl = loaded.config.reportUrl;
    byId('config-status').textContent =
      `Payments go only to ${loaded.config.merchantAddress} on Algorand mainnet` +
      (loaded.config.facilitatorMode === 'development'
        ? ' (development stack: test money on a local ledger).'
        : '.');
  } else refuseConfig(loaded.reason);
  offerDevelopmentWallet();
  byId('pay').addEventListener('click', () => void pay());
  byId('retry').addEventListener('click', () => void retry());
  byId('check-price').addEventListener('click', () => void checkPrice());
  byId('connect-pera').addEventListener('click', () => void connect('pera'));
  byId('connect-defly').addEventListener('click', () => void connect('defly'));
  byId('create-dev-wallet').addEventListener('click', () => void connect('development'));
  byId('disconnect').addEventListener('click', () => void disconnect());
  byId('print').addEventListener('click', () => window.print());
  markReady();
  await checkPrice(true);
  // A report paid for earlier in this tab is shown again: a reload never loses what was paid for.
  const paidEarlier = keptReport(sessionStorage, state.reportUrl);
  if (paidEarlier) {
    showReport(paidEarlier);
    setStatus(
      `This report was paid for earlier in this tab (transaction ${paidEarlier.proof.txId}); ` +
        'it is kept until the tab is closed.',
    );
  }
  // A payment signed on this tab before a reload and never answered: offer to resend it, not to sign again.
  const kept = pendingPayments.load(state.reportUrl);
  if (kept) {
    showProblem(keptPaymentProblem(kept), { focus: false });
  }
}

void start();
