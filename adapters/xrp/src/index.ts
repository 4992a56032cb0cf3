// @wcs/adapter-xrp: filled in by this issue
export {};
