// Renders the paid atlas human report and the proof of payment. The body came from the server we paid, but it is
// still read defensively: missing parts are skipped, never guessed, and nothing is inserted as HTML.
import type { AtlasHumanReport } from '../../../schemas/paid/atlas-human-report.ts';
import { formatUsdc } from '../../../generator/buyer/challenge.ts';
import { isAlgorandMainnet } from '../../../generator/buyer/human-report-terms.ts';
import { renderChart } from './chart.ts';
import { copyButton, h } from './dom.ts';
import { utcMinute } from './data-mode.ts';
import { formatNumber, toneOf } from './format.ts';

type Report = Partial<AtlasHumanReport>;

const list = <T>(value: T[] | undefined): T[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function cell(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number') return formatNumber(value);
  return String(value);
}

/** A reading's cell carries its tone as a class; the word itself stays, so colour is never the only label. */
const toneClass = (value: unknown): Record<string, string> => {
  const tone = toneOf(value);
  return tone ? { class: `tone-${tone}` } : {};
};

function assetTable(table: Report['asset_table']): HTMLElement | null {
  if (!table || !Array.isArray(table.rows) || table.rows.length === 0) return null;
  const columns = list(table.columns).length
    ? list(table.columns)
    : Object.keys(table.rows[0] ?? {}).map((key) => ({ key, label: key }));
  const rows = table.rows as unknown as Record<string, unknown>[];
  return h(
    'div',
    { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Per-asset table' },
    h(
      'table',
      { class: 'asset-table' },
      h('caption', {}, 'Per-asset overview'),
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c.label)))),
      h(
        'tbody',
        {},
        ...rows.map((row) =>
          h(
            'tr',
            {},
            ...columns.map((c, i) =>
              i === 0
                ? h('th', { scope: 'row' }, cell(row[c.key]))
                : h('td', toneClass(row[c.key]), cell(row[c.key])),
            ),
          ),
        ),
      ),
    ),
  );
}

/** "2026-11-26 19:16 UTC", as the page writes every other time; a value that is not a time is shown as it came. */
function updatedText(value: unknown): string {
  const when = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(when) ? String(value) : utcMinute(new Date(when).toISOString());
}

export function renderReport(body: unknown): HTMLElement {
  const report = (typeof body === 'object' && body !== null ? body : {}) as Report;
  const notice = text(report.data_notice);
  return h(
    'article',
    { class: 'report', 'aria-labelledby': 'report-title' },
    h('h2', { id: 'report-title' }, text(report.title) || 'Atlas human report'),
    h('p', { class: 'report-headline' }, text(report.headline)),
    notice ? h('p', { class: report.simulated ? 'notice notice-simulated' : 'notice' }, notice) : null,
    report.updated ? h('p', { class: 'report-updated' }, `Updated ${updatedText(report.updated)}`) : null,
    ...list(report.sections).map((section) =>
      h(
        'section',
        { class: 'report-section', 'data-section': text(section.id) },
        h('h3', {}, text(section.heading)),
        ...list(section.paragraphs).map((p) => h('p', {}, text(p))),
      ),
    ),
    assetTable(report.asset_table),
    ...list(report.charts)
      .filter((chart) => Array.isArray(chart.series) && chart.series.length > 0)
      .map((chart) => renderChart(chart)),
    list(report.limitations).length
      ? h(
          'section',
          { class: 'report-limitations' },
          h('h3', {}, 'Limitations'),
          h('ul', {}, ...list(report.limitations).map((l) => h('li', {}, text(l)))),
        )
      : null,
    h(
      'section',
      { class: 'report-disclaimers' },
      h('h3', {}, 'Disclaimers'),
      ...[...new Set([...list(report.disclaimers), text(report.disclaimer)].filter(Boolean))].map((d) =>
        h('p', {}, d),
      ),
    ),
  );
}

export interface ProofDetails {
  txId: string;
  network: string;
  amountAtomic: string;
  payer?: string;
  payTo: string;
  /** Development ledger transactions exist only on this machine: no public explorer link. */
  development: boolean;
}

export const explorerUrl = (txId: string): string => `https://allo.info/tx/${encodeURIComponent(txId)}`;

export function renderProof(proof: ProofDetails): HTMLElement {
  const network = isAlgorandMainnet(proof.network) ? `Algorand mainnet (${proof.network})` : proof.network;
  const rows: [string, Node | string][] = [
    [
      'Transaction id',
      h(
        'span',
        { class: 'with-copy' },
        h('code', { id: 'tx-id', class: 'break' }, proof.txId),
        copyButton(proof.txId, 'transaction id'),
      ),
    ],
    ['Network', proof.development ? `${network}, simulated on the local development ledger` : network],
    [
      'Amount',
      `${formatUsdc(proof.amountAtomic)} (${proof.amountAtomic} atomic units of USDC, asset 31566704)`,
    ],
    ['Paid to', h('code', { class: 'break' }, proof.payTo)],
  ];
  if (proof.payer) rows.push(['Paid from', h('code', { class: 'break' }, proof.payer)]);
  rows.push([
    'Explorer',
    proof.development
      ? 'None: this transaction exists only on the local development ledger.'
      : h(
          'a',
          { href: explorerUrl(proof.txId), rel: 'noopener', target: '_blank', id: 'explorer-link' },
          'View on allo.info',
        ),
  ]);
  return h(
    'section',
    { class: 'proof', 'aria-labelledby': 'proof-title' },
    h('h2', { id: 'proof-title' }, 'Proof of payment'),
    h('dl', {}, ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)])),
  );
}
