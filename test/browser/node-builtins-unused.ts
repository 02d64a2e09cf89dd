// The HD-wallet module that @x402/avm pulls in imports Node's `crypto` and `util` at load time, but a single-key
// signer never calls them. Web bundlers stub such imports; so does this bundle, and loudly if one is ever called.
const unused = (name: string) => () => {
  throw new Error(`${name} is not available in the browser bundle`);
};
export const createHash = unused('crypto.createHash');
export const createHmac = unused('crypto.createHmac');
export const inspect = unused('util.inspect');
export default {};
