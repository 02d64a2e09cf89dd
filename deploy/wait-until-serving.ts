// Polls a local host runtime (nginx, wrangler, netlify dev) until it serves, for as long as `keepWaiting` says its
// process may still come up. By default any HTTP answer counts; `served` can ask more of it (nginx's probe wants a
// 200 for a file the site has: a 404 from workers that cannot read the site is not serving it). True once served;
// false when the process gave up or time ran out.
export async function waitUntilServing(
  url: string,
  keepWaiting: () => boolean,
  timeoutMs: number,
  intervalMs = 100,
  served: (response: Response) => boolean = () => true,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (keepWaiting() && Date.now() < deadline) {
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (served(response)) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return false;
}
