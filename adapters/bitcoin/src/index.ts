// @wcs/adapter-bitcoin: filled in by this issue
export {};
