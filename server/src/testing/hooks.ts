// Mocha root-hook plugin: stops the embedded test cluster after the whole run.
export { mochaHooks } from './index';
