//! Records in Redis: one hash per record (`v` the version, `d` the bytes) with a TTL.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use redis::Script;

use super::{script, unexpected, RedisStore};
use crate::config::check_size;
use crate::record::ttl_millis;
use crate::{RecordKey, RecordStore, StoreError, Version, Versioned};

/// Stores the record at version 1 unless the key exists: 1 when created, 0 when not.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// Replaces the record if its version is ARGV[1]: {1, new version}, {0, current version}
/// on a conflict, {-1, 0} when absent.
const SWAP: &str = r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {-1, 0} end
if v ~= ARGV[1] then return {0, tonumber(v)} end
local next = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'v', next, 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, next}
";

static CREATE_SCRIPT: OnceLock<Script> = OnceLock::new();
static SWAP_SCRIPT: OnceLock<Script> = OnceLock::new();

impl RecordStore for RedisStore {
    async fn create(
        &self,
        key: &RecordKey,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        key.check()?;
        check_size(bytes.len(), self.config.max_record_bytes, "record")?;
        let created: i64 = script(&CREATE_SCRIPT, CREATE)
            .key(key.redis_key())
            .arg(bytes)
            .arg(ttl_millis(ttl))
            .invoke_async(&mut self.connection().await?)
            .await?;
        match created {
            1 => Ok(Version(1)),
            _ => Err(StoreError::Exists),
        }
    }

    async fn load(&self, key: &RecordKey) -> Result<Option<Versioned>, StoreError> {
        key.check()?;
        let mut hmget = redis::cmd("HMGET");
        hmget.arg(key.redis_key()).arg("v").arg("d");
        let (version, bytes): (Option<u64>, Option<Vec<u8>>) = self.query_twice(&hmget).await?;
        Ok(match (version, bytes) {
            (Some(version), Some(bytes)) => Some(Versioned {
                bytes: Bytes::from(bytes),
                version: Version(version),
            }),
            _ => None,
        })
    }

    async fn compare_and_swap(
        &self,
        key: &RecordKey,
        expected: Version,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        key.check()?;
        check_size(bytes.len(), self.config.max_record_bytes, "record")?;
        let (status, version): (i64, u64) = script(&SWAP_SCRIPT, SWAP)
            .key(key.redis_key())
            .arg(expected.0)
            .arg(bytes)
            .arg(ttl_millis(ttl))
            .invoke_async(&mut self.connection().await?)
            .await?;
        match status {
            1 => Ok(Version(version)),
            0 => Err(StoreError::Conflict {
                current: Version(version),
            }),
            -1 => Err(StoreError::NotFound),
            _ => Err(unexpected("compare-and-swap")),
        }
    }

    async fn touch(&self, key: &RecordKey, ttl: Duration) -> Result<bool, StoreError> {
        key.check()?;
        let mut pexpire = redis::cmd("PEXPIRE");
        pexpire.arg(key.redis_key()).arg(ttl_millis(ttl));
        let touched: i64 = self.query_twice(&pexpire).await?;
        Ok(touched == 1)
    }

    async fn delete(&self, key: &RecordKey) -> Result<bool, StoreError> {
        key.check()?;
        let deleted: i64 = redis::cmd("DEL")
            .arg(key.redis_key())
            .query_async(&mut self.connection().await?)
            .await?;
        Ok(deleted == 1)
    }
}
