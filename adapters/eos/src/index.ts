// @wcs/adapter-eos: filled in by this issue
export {};
