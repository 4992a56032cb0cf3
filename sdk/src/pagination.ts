/**
 * Walking the page-numbered listings (callback tasks, recharges, chain events, subscriptions,
 * outflows): { list, total } pages by pageNo (from 1) and pageSize (at most 200).
 *
 * Records created while a walk runs appear on page 1 and push older ones down a place, so a page
 * may repeat a record of the page before (docs/callbacks.md): the walk yields each id once, and
 * stops after page ceil(total / pageSize) or at an empty page.
 */
import type { CallOptions } from './http.js';

export interface Page<T> {
  list: T[];
  total: number;
}

export interface PagedQuery {
  pageNo?: number;
  pageSize?: number;
}

/** Every record of a listing, page after page (pageSize default 200, the maximum), each id once. */
export async function* paginate<Q extends PagedQuery, T extends { id: number }>(
  fetchPage: (query: Q, options?: CallOptions) => Promise<Page<T>>,
  query: Q,
  options?: CallOptions,
): AsyncGenerator<T, void, undefined> {
  const pageSize = query.pageSize ?? 200;
  const seen = new Set<number>();
  for (let pageNo = query.pageNo ?? 1; ; pageNo++) {
    const page = await fetchPage({ ...query, pageNo, pageSize }, options);
    for (const item of page.list) {
      if (seen.has(item.id)) continue;
      seen.add(item.id);
      yield item;
    }
    if (page.list.length === 0 || pageNo >= Math.ceil(page.total / pageSize)) return;
  }
}
