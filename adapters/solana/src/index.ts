// @wcs/adapter-solana: filled in by this issue
export {};
