// @wcs/adapter-evm: filled in by this issue
export {};
