// The buyer page: wires config, wallet, challenge check, payment and report rendering to the DOM in index.html.
import { formatUsdc } from '../../../generator/buyer/challenge.ts';
import type { PaymentRequirement } from '../../../generator/buyer/challenge.ts';
import { HUMAN_REPORT_PATH, isAlgorandMainnet } from '../../../generator/buyer/human-report-terms.ts';
import type { BuyerConfig } from './config.ts';
import { loadBuyerConfig } from './config.ts';
import { byId, h } from './dom.ts';
import { renderProof, renderReport } from './report.ts';
import { keepReport, keptReport } from './kept-report.ts';
import type { KeptReport } from './kept-report.ts';
import type { ChallengeResult, PaidResult, PendingPayment, Problem } from './x402-flow.ts';
import {
  fetchLedgerParams,
  pendingPayments,
  requestChallenge,
  sendPayment,
  signPayment,
  preparationProblem,
} from './x402-flow.ts';
import { connectSdkWallet } from './wallets/connect-sdk.ts';
import { createDevelopmentWallet, developmentWalletAllowed } from './wallets/development.ts';
import type { BuyerWallet } from './wallets/types.ts';

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
  pay.disabled = state.busy || !state.wallet || !requirement();
  byId('pay-hint').textContent = !requirement()
    ? ''
    : state.wallet
      ? `Signing with ${state.wallet.label}.`
      : 'Connect a wallet first.';
}

function showProblem(problem: Problem | null): void {
  show('problem', problem !== null);
  if (!problem) return;
  byId('problem').dataset.kind = problem.kind;
  byId('problem-message').textContent = problem.message;
  byId('problem-tx').textContent = problem.txId ? `Signed transaction id: ${problem.txId}` : '';
  const retry = byId<HTMLButtonElement>('retry');
  retry.textContent =
    problem.retrySafe && problem.txId ? 'Retry (sends the same signed payment)' : 'Check the price again';
  retry.dataset.mode = problem.retrySafe && problem.txId ? 'resend' : 'restart';
  retry.focus();
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
  show('challenge', true);

  const reasons = state.configProblem ? [state.configProblem] : result.check.ok ? [] : result.check.reasons;
  const list = byId('refusal-reasons');
  list.replaceChildren(...reasons.map((reason) => h('li', {}, reason)));
  show('refusal', reasons.length > 0);
  const accepted = reasons.length === 0 && result.check.ok ? result.check.requirement : null;
  show('confirm', accepted !== null);
  if (accepted) {
    byId('confirm-text').textContent =
      `You are about to pay exactly ${formatUsdc(accepted.amount)} (USDC, asset ${accepted.asset}) ` +
      `on ${networkName(accepted.network)} to ${accepted.payTo}. ` +
      (accepted.extra.feePayer
        ? 'Your wallet signs only this transfer; the network fee is paid by the facilitator.'
        : 'Your wallet signs only this transfer and pays its network fee.');
  }
  updatePayButton();
}

/** Runs one step of the flow with the pay button disabled and any earlier problem cleared. */
async function whileBusy(step: () => Promise<void>): Promise<void> {
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

const checkPrice = (): Promise<void> =>
  whileBusy(async () => {
    setStatus('Asking the server for the price…');
    const result = await requestChallenge(
      state.reportUrl,
      state.config?.merchantAddress ?? '',
      state.config?.reportAmount,
    );
    if (result.kind === 'problem') {
      state.challenge = null;
      show('challenge', false);
      setStatus('');
      showProblem(result.problem);
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
      setStatus('Reading the current Algorand round…');
      const params = await fetchLedgerParams(config.algodUrl);
      setStatus(`Waiting for ${wallet.label} to sign the ${formatUsdc(terms.amount)} transfer…`);
      payment = await signPayment(
        state.reportUrl,
        challenge.paymentRequired as { resource?: unknown },
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
  const kept = pendingPayments.load(state.reportUrl);
  if (byId('retry').dataset.mode === 'resend' && kept) await whileBusy(() => send(kept));
  else await checkPrice();
}

async function connect(kind: 'pera' | 'defly' | 'development'): Promise<void> {
  showProblem(null);
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
    showProblem(preparationProblem(error));
    return;
  }
  byId('wallet-label').textContent = state.wallet.label;
  byId('wallet-address').textContent = state.wallet.address;
  byId('wallet-status').classList.toggle('is-development', state.wallet.kind === 'development');
  show('wallet-status', true);
  show('wallet-choices', false);
  show('dev-wallet', false);
  setStatus(`Connected: ${state.wallet.label}.`);
  updatePayButton();
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
  } else {
    state.configProblem = `${loaded.reason} Without it this page cannot check who would be paid, so it will not pay.`;
    byId('config-status').textContent = state.configProblem;
    byId('config-status').classList.add('is-problem');
  }
  offerDevelopmentWallet();
  byId('pay').addEventListener('click', () => void pay());
  byId('retry').addEventListener('click', () => void retry());
  byId('check-price').addEventListener('click', () => void checkPrice());
  byId('connect-pera').addEventListener('click', () => void connect('pera'));
  byId('connect-defly').addEventListener('click', () => void connect('defly'));
  byId('create-dev-wallet').addEventListener('click', () => void connect('development'));
  byId('disconnect').addEventListener('click', () => void disconnect());
  byId('print').addEventListener('click', () => window.print());
  document.body.dataset.ready = 'true';
  await checkPrice();
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
    showProblem({
      kind: 'timeout',
      message:
        'A payment signed earlier on this tab got no answer. Retry sends that same payment; it cannot be charged twice.',
      retrySafe: true,
      txId: kept.txId,
    });
  }
}

void start();
