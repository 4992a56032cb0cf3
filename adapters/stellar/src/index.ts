// @wcs/adapter-stellar: filled in by this issue
export {};
