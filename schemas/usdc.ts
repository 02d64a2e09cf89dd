// USDC amounts as the catalogue and the publishers' configuration write them: a decimal USD price ("0.15") and its
// atomic units (150000, six decimals). Zod-free, like the catalogue that imports it (it imports no schema).

/** USDC's decimals on Algorand (ASA 31566704). */
export const USDC_DECIMALS = 6;

const PRICE = new RegExp(`^\\d+(?:\\.\\d{1,${USDC_DECIMALS}})?$`);

/** "0.15" to 150000n atomic units, exactly (no floating point); a price with more decimals than USDC is refused. */
export function atomicFromUsd(price: string): bigint {
  if (!PRICE.test(price))
    throw new RangeError(`${price} is not a USD amount with at most ${USDC_DECIMALS} decimals`);
  const [whole = '0', fraction = ''] = price.split('.');
  return BigInt(whole) * 10n ** BigInt(USDC_DECIMALS) + BigInt(fraction.padEnd(USDC_DECIMALS, '0'));
}
