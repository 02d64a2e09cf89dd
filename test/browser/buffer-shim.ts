// Node's Buffer for the browser bundle: the x402 AVM client encodes keys and transactions with it.
export { Buffer } from 'buffer';
