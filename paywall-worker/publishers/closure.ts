/** Whether a storefront closed at `closedAt` is closed at `now` (a closing time ahead is not yet a close). */
export const isClosed = (closedAt: number | null, now: number): closedAt is number =>
  closedAt !== null && closedAt <= now;
