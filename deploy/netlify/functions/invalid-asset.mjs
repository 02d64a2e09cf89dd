// Rendered from schemas/delivery.ts by `npm run render:deploy`: do not edit. reasoning.php?asset= with a value
// the static rules do not list (Netlify Functions v2): a tracked asset in another case is redirected to its
// upper-case spelling, any other value gets the delivery policy's JSON 400.
const ASSETS = ["BTC","ETH","XRP","SOL","ALGO","XLM","HBAR"];
const BODY = {"success":false,"error":"invalid_asset","message":"Unknown asset. Use one of BTC, ETH, XRP, SOL, ALGO, XLM, HBAR (case-insensitive); without the parameter the default is BTC.","allowed_values":["BTC","ETH","XRP","SOL","ALGO","XLM","HBAR"],"disclaimer":"Educational information only. This is not financial, investment, trading, tax, legal, betting, gambling or fund-management advice, gives no personalised recommendation and no guarantee of future outcomes. Confidence describes the strength and agreement of the available evidence, not certainty."};
const HEADERS = {"Access-Control-Allow-Origin":"*","Access-Control-Expose-Headers":"PAYMENT-REQUIRED, PAYMENT-RESPONSE, Mcp-Session-Id, Mcp-Protocol-Version","Access-Control-Allow-Methods":"GET, HEAD, OPTIONS","Access-Control-Allow-Headers":"PAYMENT-SIGNATURE, X-PAYMENT, Access-Control-Expose-Headers, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID","X-Content-Type-Options":"nosniff","Content-Security-Policy":"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline' https://fonts.googleapis.com; font-src 'self' data: https://fonts.gstatic.com; img-src 'self' data: blob: https:; media-src 'self' https:; connect-src 'self' https: wss:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'","Content-Type":"application/json; charset=utf-8","Cache-Control":"no-store"};
const CORS = {"Access-Control-Allow-Origin":"*","Access-Control-Expose-Headers":"PAYMENT-REQUIRED, PAYMENT-RESPONSE, Mcp-Session-Id, Mcp-Protocol-Version"};

export default (request) => {
  const asset = (new URL(request.url).searchParams.get('asset') ?? '').toUpperCase();
  if (ASSETS.includes(asset)) {
    const location = `/api/reasoning.php?asset=${asset}`;
    return new Response(null, { status: 301, headers: { ...CORS, Location: location, 'Cache-Control': 'no-store' } });
  }
  return new Response(JSON.stringify(BODY), { status: 400, headers: HEADERS });
};
