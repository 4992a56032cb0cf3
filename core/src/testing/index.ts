export { runAdapterConformance, type AdapterFixture } from './adapter-conformance';
export { runKeyStoreConformance, type KeyStoreConformanceOptions } from './keystore-conformance';
