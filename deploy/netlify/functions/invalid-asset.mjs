// Rendered from schemas/delivery.ts by `npm run render:deploy`: do not edit. The JSON 400 of the delivery
// policy for reasoning.php?asset= with an unknown value (Netlify Functions v2).
const BODY = {"success":false,"error":"invalid_asset","message":"Unknown asset. Use one of BTC, ETH, XRP, SOL, ALGO, XLM, HBAR; without the parameter the default is BTC.","allowed_values":["BTC","ETH","XRP","SOL","ALGO","XLM","HBAR"]};
const HEADERS = {"Access-Control-Allow-Origin":"*","Access-Control-Expose-Headers":"PAYMENT-REQUIRED, PAYMENT-RESPONSE","Access-Control-Allow-Methods":"GET, HEAD, OPTIONS","Access-Control-Allow-Headers":"PAYMENT-SIGNATURE, X-PAYMENT, Access-Control-Expose-Headers, Content-Type","X-Content-Type-Options":"nosniff","Content-Type":"application/json; charset=utf-8","Cache-Control":"no-store"};

export default () => new Response(JSON.stringify(BODY), { status: 400, headers: HEADERS });
