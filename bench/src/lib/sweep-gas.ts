/**
 * Gas and fees of a sweep from the receipts of the service's transactions, and the gas per swept
 * address of each kind (ERC-20, native). In top-up mode every address has its own transactions
 * (an ERC-20 address: its top-up and its sweep; a native one: its sweep), so its gas is exact. In
 * delegated mode one SWEEP_BATCH transaction sweeps many addresses: the batches holding one kind
 * only give that kind's gas per address exactly (their gasUsed over their entries, the batch's
 * base cost shared); a kind with no such batch is taken from a least-squares fit of
 * gasUsed = a x ERC-20 entries + b x native entries over all the sweep's batches, reported with
 * the fit's largest miss.
 */

/** What one unit of accounting cost: an address's transactions (top-up mode) or one batch (delegated). */
export interface CostUnit {
  readonly gas: bigint;
  readonly fee: bigint;
  /** ERC-20 and native addresses it swept. */
  readonly tok: number;
  readonly nat: number;
}

export interface PerAddressGas {
  readonly token: number | null;
  readonly native: number | null;
  /** exact: both kinds from one-kind units; fit: at least one kind from the least-squares fit; none: nothing to tell. */
  readonly method: 'exact' | 'fit' | 'none';
  /** The fit, when one was made (some unit held both kinds): the largest |gasUsed - fitted| over the units, in gas. */
  readonly maxMiss: number | null;
}

/** Gas per swept address of each kind (see the file's comment). */
export function perAddressGas(units: readonly CostUnit[]): PerAddressGas {
  const used = units.filter((u) => u.tok + u.nat > 0);
  const oneKind = (k: 'tok' | 'nat') => {
    const us = used.filter((u) => u[k] > 0 && u[k === 'tok' ? 'nat' : 'tok'] === 0);
    const n = us.reduce((s, u) => s + u[k], 0);
    return n === 0 ? null : Number(us.reduce((s, u) => s + u.gas, 0n)) / n;
  };
  let token = oneKind('tok');
  let native = oneKind('nat');
  const mixed = used.some((u) => u.tok > 0 && u.nat > 0);
  if (!mixed) return { token, native, method: token === null && native === null ? 'none' : 'exact', maxMiss: null };
  const fit = leastSquares(used);
  const exact = token !== null && native !== null;
  token ??= fit?.a ?? null;
  native ??= fit?.b ?? null;
  return { token, native, method: exact ? 'exact' : token === null && native === null ? 'none' : 'fit', maxMiss: fit?.maxMiss ?? null };
}

/** min sum (gas - a tok - b nat)^2 over the units (normal equations); null when the units cannot tell a from b. */
function leastSquares(used: readonly CostUnit[]): { a: number; b: number; maxMiss: number } | null {
  let tt = 0, tn = 0, nn = 0, gt = 0, gn = 0;
  for (const u of used) {
    const g = Number(u.gas);
    tt += u.tok * u.tok; tn += u.tok * u.nat; nn += u.nat * u.nat; gt += g * u.tok; gn += g * u.nat;
  }
  const det = tt * nn - tn * tn;
  if (Math.abs(det) < 1e-9) return null;
  const a = (gt * nn - gn * tn) / det;
  const b = (gn * tt - gt * tn) / det;
  return { a, b, maxMiss: Math.max(...used.map((u) => Math.abs(Number(u.gas) - a * u.tok - b * u.nat))) };
}

export interface CostTotals {
  readonly transactions: number;
  readonly gas: bigint;
  readonly fee: bigint;
  /** fee / gas: the mean effective gas price paid, wei per gas. */
  readonly meanPrice: number | null;
  readonly minPrice: bigint | null;
  readonly maxPrice: bigint | null;
}

/** Sums of gasUsed and gasUsed x effectiveGasPrice over transactions given as (gasUsed, price). */
export function totals(txs: ReadonlyArray<{ gasUsed: bigint; price: bigint }>): CostTotals {
  const gas = txs.reduce((s, t) => s + t.gasUsed, 0n);
  const fee = txs.reduce((s, t) => s + t.gasUsed * t.price, 0n);
  const prices = txs.map((t) => t.price).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return {
    transactions: txs.length, gas, fee,
    meanPrice: gas === 0n ? null : Number(fee) / Number(gas),
    minPrice: prices[0] ?? null,
    maxPrice: prices[prices.length - 1] ?? null,
  };
}

/** JSON-safe copy of CostTotals (bigints as decimal strings). */
export function totalsJson(t: CostTotals) {
  return { transactions: t.transactions, gas: t.gas.toString(), feeWei: t.fee.toString(), meanPriceWei: t.meanPrice, minPriceWei: t.minPrice?.toString() ?? null, maxPriceWei: t.maxPrice?.toString() ?? null };
}
