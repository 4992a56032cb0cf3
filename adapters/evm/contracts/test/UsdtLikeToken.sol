// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/**
 * TEST ONLY. An ERC-20 shaped like mainnet USDT where it matters here: `transfer` returns
 * nothing (so a caller expecting `bool` fails to decode), and failures are plain reverts.
 * Anyone may mint.
 */
contract UsdtLikeToken {
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        totalSupply += amount;
        emit Transfer(address(0), to, amount);
    }

    /// No return value, like USDT's.
    function transfer(address to, uint256 amount) external {
        require(balanceOf[msg.sender] >= amount, "UsdtLike: balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
    }
}
