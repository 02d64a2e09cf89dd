// /llms.txt in the llmstxt.org format: an H1, a blockquote summary, a few paragraphs, then H2 sections of
// links with notes. "Optional" holds what an agent with a short context can skip.
import { historyLlmsLines } from './history-entries.ts';
import { statusLlmsLine } from './status-entries.ts';
import { PROJECT, TRACKED_ASSETS } from '../../schemas/common.ts';
import { MCP_PATH } from '../../schemas/delivery.ts';
import { USDC_ASA_ID } from '../../schemas/paid/terms.ts';
import { DOCS_PATHS, endpointDocsPath } from './docs-paths.ts';
import { FRESHNESS_RULE, freshnessSentence } from './freshness-fields.ts';
import { freeResourcesInIntegrationOrder, noteFor, paidResources } from './endpoint-notes.ts';
import { absoluteUrl } from './urls.ts';

export interface LlmsTxtOptions {
  baseUrl: string;
  /** Whether the browser buyer (/x402-buyer/) is part of this build. */
  hasBuyer: boolean;
  /** The size of /openapi.json in bytes, when known: said beside its link, for agents that count their context. */
  openapiBytes?: number;
}

/** "about 790 KB": a size an agent can weigh before fetching, steady across runs that change a few bytes. */
const aboutKilobytes = (bytes: number): string =>
  `about ${bytes < 10_000 ? Math.ceil(bytes / 1000) : Math.round(bytes / 10_000) * 10} KB`;

const link = (title: string, url: string, note: string) => `- [${title}](${url}): ${note}`;

export function buildLlmsTxt({ baseUrl, hasBuyer, openapiBytes }: LlmsTxtOptions): string {
  const url = (path: string) => absoluteUrl(baseUrl, path);
  const free = freeResourcesInIntegrationOrder();
  const snapshots = free.filter((r) => noteFor(r).group === 'snapshot');
  const arena = free.filter((r) => noteFor(r).group === 'arena');

  const sections: string[] = [
    `# ${PROJECT}`,
    `> Educational market intelligence about ${TRACKED_ASSETS.join(', ')} as static, versioned JSON: free ` +
      'snapshots regenerated on a schedule, and premium resources sold per request over x402 v2. ' +
      'Educational only, never financial advice.',
    'Every endpoint is an HTTP GET that returns JSON; free endpoints need no account or key. Every free ' +
      'response says when the next update is due; the fields that say so differ per endpoint and are named ' +
      `after each link below. ${FRESHNESS_RULE} Confidence is the strength and agreement of the evidence, not ` +
      'certainty. When a response says `simulated`, its numbers are not market observations.',
    'Recommended integration order: market regime, main brain, liquidity, derivatives, reasoning, statistics, ' +
      'then paid.',
    `The same data is also served as tools over the Model Context Protocol: the MCP endpoint is ${url(MCP_PATH)} ` +
      '(streamable HTTP; free resources, reasoning per asset, history, and the four paid products over x402). ' +
      'How to add it to a client is under Agents (MCP) below.',
    '## Free endpoints (in the recommended integration order)',
    snapshots
      .map((r) =>
        link(
          r.title,
          url(r.path),
          `${noteFor(r).useWhen}${r.id === 'reasoning' ? ` Add ?asset= one of ${TRACKED_ASSETS.join(', ')} (upper or lower case).` : ''} ${freshnessSentence(r)}`,
        ),
      )
      .join('\n'),
    '## Paid endpoints (x402 v2, USDC on Algorand)',
    [
      ...paidResources().flatMap((r) => [
        link(
          r.title,
          url(r.path),
          `${r.priceUsd} USDC per request. ${noteFor(r).useWhen} Answers 402 until paid (503 with ` +
            'Retry-After while the file cannot be sold).',
        ),
        link(`${r.title} docs`, url(endpointDocsPath(r)), 'fields, example body, curl line and the 402'),
      ]),
      link(
        'Payment terms',
        url(DOCS_PATHS.paymentTerms),
        `network, asset ${USDC_ASA_ID}, exact amounts, headers`,
      ),
    ].join('\n'),
    '## Agents (MCP)',
    link(
      'For agent builders (MCP)',
      url(DOCS_PATHS.agents),
      `add the MCP server at ${url(MCP_PATH)} to a client; its tools, the x402 payment flow and a worked example`,
    ),
    '## History (past values, static files)',
    historyLlmsLines(url),
    '## Docs',
    [
      link(
        'OpenAPI 3.1 (JSON)',
        url('/openapi.json'),
        'every path, schema, example and payment term' +
          (openapiBytes === undefined
            ? ''
            : ` (${aboutKilobytes(openapiBytes)}; each endpoint's docs page is a small part of it)`),
      ),
      link(
        'How to read freshness',
        url(DOCS_PATHS.freshness),
        'the timestamps, and when a response is fresh, late or stale',
      ),
      link('Educational notice', url(DOCS_PATHS.educationalNotice), 'what these responses are and are not'),
      link('Pay from code', url(DOCS_PATHS.payFromCode), 'runnable curl and Node (@x402/fetch) examples'),
      link(
        'Arena rules',
        url(DOCS_PATHS.arenaRules),
        'rounds, votes, consensus, ties and percentages: what every arena figure’s rules_url points to',
      ),
      link(
        'API overview',
        url(DOCS_PATHS.overview),
        'all endpoints with fields, examples from the latest run and curl lines',
      ),
    ].join('\n'),
    '## Optional',
    [
      ...arena.map((r) => link(r.title, url(r.path), `${noteFor(r).useWhen} ${freshnessSentence(r)}`)),
      statusLlmsLine(url),
      link('OpenAPI 3.1 (YAML)', url('/openapi.yaml'), 'the same document as YAML'),
      link(
        'Interactive API reference',
        url(DOCS_PATHS.apiReference),
        'the OpenAPI document as a page for people, with try-it for the free endpoints (needs JavaScript)',
      ),
      ...free.map((r) =>
        link(`${r.title} docs`, url(endpointDocsPath(r)), 'fields, example from the latest run, curl line'),
      ),
      ...(hasBuyer
        ? [
            link(
              'Browser buyer',
              url('/x402-buyer/'),
              'buys and renders the atlas human report with a mobile wallet',
            ),
          ]
        : []),
      link(
        'Arena track record',
        url(DOCS_PATHS.trackRecord),
        'how often the brain and the crowd matched the outcome, with n and 95 % intervals',
      ),
      link(
        'Publisher programme',
        url(DOCS_PATHS.publishers),
        'how independent publishers resell the paid reports under their own brand, paid directly on chain',
      ),
      link(
        'Sitemap',
        url('/sitemap.xml'),
        'every page and every free file linked here (not the paid paths or /mcp), with its last modification ' +
          '(the history index lists the day files)',
      ),
    ].join('\n'),
  ];
  return `${sections.join('\n\n')}\n`;
}
