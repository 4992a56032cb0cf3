// @wcs/custody-software: filled in by this issue
export {};
