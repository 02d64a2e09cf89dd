// A signed payment the buyer page keeps (site/x402-buyer/src/x402-flow.ts) for the human report, as the tests of its
// answers send it: the header and transaction id are stand-ins, the requirement is the report's own terms.
import type { PendingPayment } from '../../site/x402-buyer/src/x402-flow.ts';
import { HUMAN_REPORT_AMOUNT } from '../../generator/buyer/human-report-terms.ts';

/** The human report's payment kept for `url`, signed (header 'c2lnbmVk') as transaction 'TXID'. */
export function pendingPayment(url: string): PendingPayment {
  return {
    url,
    header: 'c2lnbmVk',
    txId: 'TXID',
    requirement: {
      scheme: 'exact',
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
      amount: HUMAN_REPORT_AMOUNT,
      asset: '31566704',
      payTo: 'PAYEE',
      maxTimeoutSeconds: 300,
      extra: {},
    },
  };
}
