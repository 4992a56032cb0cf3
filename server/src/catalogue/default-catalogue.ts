import type { ChainConfig, TokenConfig } from '../config/config';

/**
 * The built-in catalogue, used when no config file replaces it. Ids are stable and
 * documented (docs/catalogue.md): chains 1-8 live and 101-108 test; a token's id is
 * its chain id x 100 + n (n = 0 for the native coin).
 * Contract addresses are the issuers' published ones (Tether, Circle).
 */
export const DEFAULT_CHAINS: readonly ChainConfig[] = [
  { id: 1, code: 'BTC', name: 'Bitcoin', family: 'bitcoin', environment: 'live', network: 'mainnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 2, evmChainId: null },
  { id: 2, code: 'ETH', name: 'Ethereum', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 12, evmChainId: 1 },
  { id: 3, code: 'BSC', name: 'BNB Smart Chain', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'BNB', decimals: 18, confirmations: 20, evmChainId: 56 },
  { id: 4, code: 'POLYGON', name: 'Polygon PoS', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'POL', decimals: 18, confirmations: 128, evmChainId: 137 },
  { id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta', nativeSymbol: 'SOL', decimals: 9, confirmations: 32, evmChainId: null },
  { id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1, evmChainId: null },
  { id: 7, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1, evmChainId: null },
  { id: 8, code: 'EOS', name: 'EOS', family: 'eos', environment: 'live', network: 'mainnet', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null },

  { id: 101, code: 'BTC', name: 'Bitcoin Testnet', family: 'bitcoin', environment: 'test', network: 'testnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 1, evmChainId: null },
  { id: 102, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: 11155111 },
  { id: 103, code: 'BSC', name: 'BNB Smart Chain Testnet', family: 'evm', environment: 'test', network: 'testnet', nativeSymbol: 'BNB', decimals: 18, confirmations: 3, evmChainId: 97 },
  { id: 104, code: 'POLYGON', name: 'Polygon Amoy', family: 'evm', environment: 'test', network: 'amoy', nativeSymbol: 'POL', decimals: 18, confirmations: 3, evmChainId: 80002 },
  { id: 105, code: 'SOL', name: 'Solana Devnet', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: 1, evmChainId: null },
  { id: 106, code: 'XRP', name: 'XRP Ledger Testnet', family: 'xrp', environment: 'test', network: 'testnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1, evmChainId: null },
  { id: 107, code: 'XLM', name: 'Stellar Testnet', family: 'stellar', environment: 'test', network: 'testnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1, evmChainId: null },
  { id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null },
];

function native(chain: ChainConfig): TokenConfig {
  return { id: chain.id * 100, chainCode: chain.code, environment: chain.environment as 'test' | 'live', symbol: chain.nativeSymbol, name: chain.name + ' native coin', contract: null, decimals: chain.decimals };
}

const tok = (id: number, chainCode: string, environment: 'test' | 'live', symbol: string, name: string, contract: string, decimals: number): TokenConfig =>
  ({ id, chainCode, environment, symbol, name, contract, decimals });

export const DEFAULT_TOKENS: readonly TokenConfig[] = [
  ...DEFAULT_CHAINS.map(native),
  // live
  tok(201, 'ETH', 'live', 'USDT', 'Tether USD', '0xdAC17F958D2ee523a2206206994597C13D831ec7', 6),
  tok(202, 'ETH', 'live', 'USDC', 'USD Coin', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 6),
  tok(301, 'BSC', 'live', 'USDT', 'Tether USD (BEP-20)', '0x55d398326f99059fF775485246999027B3197955', 18),
  tok(302, 'BSC', 'live', 'USDC', 'USD Coin (BEP-20)', '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18),
  tok(401, 'POLYGON', 'live', 'USDT', 'Tether USD (PoS)', '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', 6),
  tok(402, 'POLYGON', 'live', 'USDC', 'USD Coin', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 6),
  tok(501, 'SOL', 'live', 'USDT', 'Tether USD', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', 6),
  tok(502, 'SOL', 'live', 'USDC', 'USD Coin', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 6),
  tok(702, 'XLM', 'live', 'USDC', 'USD Coin', 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN', 7),
  tok(801, 'EOS', 'live', 'USDT', 'Tether USD', 'tethertether:USDT', 4),
  // test networks (Circle's published test USDC)
  tok(10202, 'ETH', 'test', 'USDC', 'USD Coin (Sepolia)', '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', 6),
  tok(10402, 'POLYGON', 'test', 'USDC', 'USD Coin (Amoy)', '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582', 6),
  tok(10502, 'SOL', 'test', 'USDC', 'USD Coin (Devnet)', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', 6),
  tok(10702, 'XLM', 'test', 'USDC', 'USD Coin (Testnet)', 'USDC:GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5', 7),
];
